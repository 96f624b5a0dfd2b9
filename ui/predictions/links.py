"""Open a row into a study: the links of the Attention, Attribution, Causal patching and Head
importance pages with the row's example and the classifier carried in the URL, by the keys each
page names in its own ``ui/<study>/state.py`` (this package sits above the other pages' in
.importlinter, as analysis.predictions above their studies; it reads their key names only).

A link that cannot carry what it needs says why instead (one line): Causal patching pins only
the held-out reviews of the bundled sample (for an ABSA checkpoint of this dashboard), and Head
importance's per-example view reads one classifier input (a QA-B / NLI-B row is five)."""

from __future__ import annotations

from dataclasses import dataclass

from analysis.absa.tasks import ASPECT_WORDS, is_binary
from analysis.core.models import EXAMPLE_SPEC
from ui.attribution import state as attribution
from ui.common.frame.links import attention_link, input_params, page_link, spec_params
from ui.importance import state as importance
from ui.patching import state as patching
from ui.predictions import state as S


@dataclass(frozen=True)
class StudyLink:
    page: str  # the page's title
    url: str | None  # None: the page cannot open this row (``why`` says so)
    why: str = ""


def attribution_link(spec: str, text: str, pair: str | None, aspect: str | None) -> str:
    """The Attribution page on the row: the example checkpoint reads the review with the
    aspect word (its page's own way), any other classifier the row's text and pair."""
    if spec == EXAMPLE_SPEC and aspect is not None:
        params = {attribution.MODEL: attribution.MODEL_CHOICES[0], **input_params(text, None),
                  attribution.ASPECT: ASPECT_WORDS[aspect]}
    else:
        params = {attribution.MODEL: attribution.MODEL_CHOICES[1], **spec_params(spec),
                  **input_params(text, pair)}
    return page_link("attribution", params)


def patching_link(spec: str, review: int, aspect: str, kind: str | None = None) -> str:
    """The Causal patching page on held-out review ``review`` asked about ``aspect`` (with the
    counterfactual ``kind``'s first suggestion, the one the robustness view answered)."""
    model = patching.EXAMPLE if spec == EXAMPLE_SPEC else patching.SIDEBAR
    params = {patching.MODEL: model, **({} if spec == EXAMPLE_SPEC else spec_params(spec)),
              patching.REVIEW: int(review), patching.ASPECT: aspect}
    if kind is not None:
        params.update({patching.KIND: kind, patching.SUGGESTION: 0})
    return page_link("patching", params)


def importance_link(spec: str, text: str, pair: str | None, label: str,
                    aspect: str | None = None) -> str:
    """Head importance's per-example view on the row: its text (and pair) and gold label, or,
    for an ABSA row, the review and the aspect category asked (the page reads them as the
    checkpoint's card says, as this row was read)."""
    model = importance.EXAMPLE if spec == EXAMPLE_SPEC else importance.SIDEBAR
    params = {importance.SCOPE: importance.ONE, importance.MODEL: model,
              **({} if spec == EXAMPLE_SPEC else spec_params(spec)), importance.TEXT: text,
              **({importance.PAIR: pair} if pair is not None and aspect is None else {}),
              **({importance.ASPECT: aspect} if aspect is not None else {}),
              importance.LABEL: label}
    return page_link("importance", params)


def pinnable(result, data_choice: str) -> bool:
    """Whether a row's review is one of the held-out sentences Causal patching lists: ABSA rows
    of the bundled sample's held-out sentences (the checkpoint's card names them)."""
    return result.absa and data_choice == S.SAMPLE and result.task in ("qa_m", "nli_m")


def study_links(spec: str, result, row: int, data_choice: str, layer: int) -> list[StudyLink]:
    """The four links for ``row`` (Attention opens its head view at ``layer``, 1-indexed)."""
    text, pair = result.texts[row], result.pairs[row]
    aspect = result.categories[row] if result.absa else None
    review = result.reviews[row] if result.absa else text
    out = [StudyLink("Attention", attention_link(spec, text, pair, layer, 1,
                                                 view="Head view")),
           StudyLink("Attribution", attribution_link(spec, review if aspect else text,
                                                     pair, aspect))]
    if pinnable(result, data_choice):
        out.append(StudyLink("Causal patching", patching_link(spec, int(result.sentence[row]),
                                                              aspect)))
    else:
        out.append(StudyLink("Causal patching", None,
                             "Causal patching pins the held-out reviews of the bundled sample "
                             "for an ABSA checkpoint (QA-M or NLI-M); this row is not one of "
                             "them."))
    gold = result.classes[int(result.gold[row])]
    if aspect is not None and is_binary(result.task):
        out.append(StudyLink("Head importance", None,
                             "Head importance reads one classifier input; a QA-B or NLI-B row "
                             "is answered by five (one per label)."))
    else:
        out.append(StudyLink("Head importance", importance_link(
            spec, review if aspect else text, None if aspect else pair, gold, aspect)))
    return out
