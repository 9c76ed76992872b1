"""Which rows of a score table are fits of every entry, in memory and read back from CSV."""
import io

import pandas as pd

from study.score_tables import is_unmasked


def test_rows_of_the_unmasked_design_in_memory_and_from_csv():
    table = pd.DataFrame({"fit": ["a", "b", "zeros"], "heldout_used": [True, False, None]})
    assert is_unmasked(table).tolist() == [False, True, False]
    back = pd.read_csv(io.StringIO(table.to_csv(index=False)))
    assert is_unmasked(back).tolist() == [False, True, False]


def test_a_table_without_the_column_is_all_masked():
    assert not is_unmasked(pd.DataFrame({"fit": ["a", "b"]})).any()
