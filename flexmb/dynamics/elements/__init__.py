"""The element types between bodies: attachments (:mod:`.attachments`: where a joint or force sits on
a body, how it moves, how its wrench reaches the body), joints (:mod:`.joints`: relative kinematics,
multipliers, constitutive laws; compiled glue :mod:`.joint_kernels`) and force elements
(:mod:`.forces`)."""
