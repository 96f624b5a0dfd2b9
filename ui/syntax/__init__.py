"""The Syntax page (Clark et al. 2019; Hewitt & Manning 2019): treebank input, views, blocks."""
