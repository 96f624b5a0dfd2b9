"""One benchmark per study of analysis/ (``attention_*``: the Attention page; ``absa*``: the
ABSA fine-tune and the example checkpoint), each timing the study against its floor or a
baseline in the same run."""
