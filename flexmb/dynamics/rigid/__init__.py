"""The compiled path of rigid-only models (element, end values, node work, Newton loop of small
systems), checked against the general path. Engine v3 folds it into the one implementation."""
