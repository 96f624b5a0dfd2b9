"""The No-op statistics page (Clark et al. 2019): cached statistics, charts and blocks."""
