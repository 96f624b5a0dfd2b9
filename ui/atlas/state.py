"""Every session-state key, URL parameter and cache key of the Head atlas page, named once.
Widgets bound to the URL use their key as the parameter's name, so a copied link opens the
same view: the model, the rules' thresholds, the filters and the pinned head."""

from __future__ import annotations

PREFIX = "atlas"
MODEL = "atlas_model"  # the example checkpoint or the sidebar's model
LAYER = "atlas_layer"  # the pinned head, 1-indexed
HEAD = "atlas_head"
FAMILIES = "atlas_roles"  # the roles shown (filter)
USE = "atlas_use"  # the use shown (filter)
GRID = "atlas_grid"  # the clickable grid (its selection)
GRID_BEFORE = "atlas_grid_before"
PICKED = "atlas_picked"  # the grid's last click applied to the head pickers
COPY = "atlas_copy"
COMPUTE = "atlas_compute"
JSON = "atlas_json"
CSV = "atlas_csv"
TABLE = "atlas_table"
CARD = "atlas_card"
DOWNLOADS = "atlas-dl"
REPORT = "atlas"
JOB = "atlas-{}"  # one queue job per study: JOB.format(step name)
# the rules' thresholds (URL parameters): analysis.atlas.facts.Thresholds' fields
RULE = "atlas_rule_{}"

EXAMPLE, SIDEBAR = "Example checkpoint", "Sidebar model"
MODELS = [EXAMPLE, SIDEBAR]
ALL, USED, UNUSED, DISAGREE = ("All heads", "Used by the task", "Not used",
                               "Role and use disagree")
USES = [ALL, USED, UNUSED, DISAGREE]

def rule_key(name: str) -> str:
    """The URL parameter of the threshold ``name``."""
    return RULE.format(name)


def job_key(step: str) -> str:
    return JOB.format(step)
