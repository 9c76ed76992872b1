"""What lpp keeps on disk, and how: every file is written atomically and byte-reproducibly,
and read back only after its digest and fields are checked.

* :mod:`lpp.formats.files` — atomic writes, canonical JSON and ``.npz`` bytes, verified folders;
* :mod:`lpp.formats.counts` — a count matrix with its row and column ids (``counts.npz``);
* :mod:`lpp.formats.privatized` — a privatized data set, the only data a private method reads;
* :mod:`lpp.formats.privatized_blocks` — the same, in row blocks for a fit on a cluster;
* :mod:`lpp.formats.ledger` — what private folders release, and the epsilon a reader of
  several has spent (basic composition);
* :mod:`lpp.formats.fits` — a fitted model's samples and record (``fit.json``): the format;
  :mod:`lpp.formats.result` — the one result type of a fit (:class:`~lpp.formats.result.FitResult`),
  which saves and loads itself; :mod:`lpp.formats.fit_layout` — its files' layout and typed
  record (:class:`~lpp.formats.fit_layout.FitMetadata`);
* :mod:`lpp.formats.kinds` — a saved fit told from a chain's checkpoint by the format each
  names.

The package imports none of its modules, so reading one format does not load the others.
"""
