"""Cinder's own test base (cinder.tests.unit.test.TestCase), made to work under pytest."""

from cinder.tests.unit import test


class CinderTestCase(test.TestCase):
    def __delattr__(self, name):
        # pytest binds the test method on the instance and deletes it afterwards; Cinder's cleanup has
        # already cleared every public instance attribute by then.
        if name.startswith("test_") and name not in self.__dict__:
            return
        super().__delattr__(name)
