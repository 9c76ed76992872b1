"""Suite-wide settings: property tests are derandomized, so every run (CI's included) tries
the same examples, and keep no example database in the work tree."""
from hypothesis import settings

settings.register_profile("lpp", derandomize=True, database=None, deadline=None)
settings.load_profile("lpp")
