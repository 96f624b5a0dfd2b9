"""Features (docs/METHODS.md section 17): sparse dictionaries of what a layer represents."""
