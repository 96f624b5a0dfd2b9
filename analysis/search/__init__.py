"""Corpus search (exBERT, Hoover et al. 2020): the pieces of a corpus a model treats alike
at any layer. Every word piece's hidden state at every layer and every head's context
vector, L2-normalised, stored as float16 and searched by cosine with faiss (exact up to a
size, HNSW with its recall measured beyond); the matches' labels against the corpus's rates
and the plain reading (docs/METHODS.md section 16).

Modules: :mod:`.corpus` (a treebank, ABSA data or a text corpus -> sentences and per-piece
labels), :mod:`.job` (the index built as a map/merge corpus job, its cache folder, the query
vector), :mod:`.index` (the folder on disk, exact and HNSW search, recall), :mod:`.store`
(the vectors written as they are built, the folder written), :mod:`.reading` (label shares and
the plain reading), :mod:`.study` (the study's one interface: :data:`INDEX` the index,
:data:`STUDY` a query).
"""

from analysis.search.corpus import LABEL_NAMES, SearchCorpus, search_corpus
from analysis.search.index import (EXACT_MAX_CELLS, MIN_RECALL, IndexData, Match, SearchIndex,
                                   exact_search, recall_at)
from analysis.search.store import write_index
from analysis.search.job import (SearchJob, build_index, cache_folder, cached_index,
                                 check_model, query, query_vector)
from analysis.search.reading import label_rows, own_row, reading
from analysis.search.study import INDEX, STUDY, SearchResult

__all__ = ["INDEX", "STUDY", "SearchResult", "EXACT_MAX_CELLS", "IndexData", "LABEL_NAMES",
           "MIN_RECALL", "Match", "SearchCorpus",
           "SearchIndex", "SearchJob", "build_index", "cache_folder", "cached_index",
           "check_model", "exact_search", "label_rows", "own_row", "query", "query_vector",
           "reading", "recall_at", "search_corpus", "write_index"]
