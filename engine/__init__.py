"""rulecheck's engine. Importing it has `dataclasses` compile the methods of the engine's
own classes through the code cache (`engine/codecache.py`): the first thing done, so
that the classes of every module imported after it are made that way."""

from engine.codecache import keep_dataclass_methods

keep_dataclass_methods()
