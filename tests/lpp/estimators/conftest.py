"""Each test starts with an empty record of noised rows: the record is process-wide, and a
test's warnings must not depend on which tests ran before it."""
import pytest

from lpp.estimators import forget_noised_rows


@pytest.fixture(autouse=True)
def empty_record_of_noised_rows():
    forget_noised_rows()
    yield
    forget_noised_rows()
