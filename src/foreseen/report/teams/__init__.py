"""The teams instrument's HTML pages: the record, curves, comparisons, calibration, advice."""
