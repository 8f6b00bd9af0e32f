"""The element types between bodies: attachments (:mod:`.attachments`: where a joint or force sits on
a body, how it moves, how its wrench reaches the body), joints (:mod:`.joints`: relative kinematics,
multipliers; their compiled laws :mod:`.joint_law`) and force elements (:mod:`.forces`; their
compiled laws :mod:`.force_law`)."""
