"""The Fine-tuning drift page (Kovaleva et al. 2019): cached comparison, charts and blocks."""
