"""Helper package of the sample module: pure logic, no mgp, no mutable module state."""


def shout(text: str) -> str:
    return text.upper() + "!"
