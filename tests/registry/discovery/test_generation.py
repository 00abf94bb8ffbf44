"""The data generation: bumped by every write that changes what discovery finds, once per
write, and at a bulk write's end."""

import pytest

from registry.discovery.generation import generation_bump, generation_bump_at_end, generation_read

pytestmark = pytest.mark.django_db


def test_bumps_asked_for_inside_are_one_bump_at_the_end(django_assert_num_queries):
    before = generation_read()
    with generation_bump_at_end():
        with django_assert_num_queries(0):
            generation_bump()
            with generation_bump_at_end():  # nested: the outermost bumps
                generation_bump()
        assert generation_read() == before
    assert generation_read() == before + 1


def test_nothing_is_bumped_when_nothing_asked_or_a_step_raised():
    before = generation_read()
    with generation_bump_at_end():
        pass
    with pytest.raises(RuntimeError), generation_bump_at_end():
        generation_bump()
        raise RuntimeError("the write failed")
    assert generation_read() == before
    generation_bump()
    assert generation_read() == before + 1
