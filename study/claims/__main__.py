"""``python -m study.claims``: check every claim and write the report
(:func:`study.claims.report.main`)."""
from study.claims.report import main

raise SystemExit(main())
