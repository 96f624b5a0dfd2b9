"""The glossary: every term the pages use, in everyday words (shown on the Report page and
beside the views; docs/METHODS.md has the formulas)."""

from __future__ import annotations

import re

GLOSSARY: dict[str, str] = {
    "attention head": "One of the small units inside each layer that decides, for every word "
        "piece, how much to look at every other word piece. Each layer has several heads "
        "working side by side; they are numbered from 1.",
    "attention map": "A table of one head's attention for one input: a row per word piece "
        "looking, a column per word piece looked at; each row adds up to 1.",
    "layer": "The model reads the text in stages; a layer is one stage. Layer 1 is closest to "
        "the raw text, the last layer closest to the model's answer. Layer 0 is the embeddings.",
    "token": "A word piece: the model splits words into pieces it knows (\"playing\" may become "
        "\"play\" and \"##ing\").",
    "[CLS]": "A special token added at the start of every input; classifiers read their answer "
        "from it.",
    "[SEP]": "A special token that ends each sentence of the input (a sentence pair has two).",
    "no-op": "\"No operation\": attention that goes somewhere (often to [SEP] or [CLS]) but "
        "changes almost nothing, like a default resting place when a head has nothing to do.",
    "vertical pattern": "A head whose attention map shows bright columns: every token looks at "
        "the same few tokens, usually [CLS] and [SEP].",
    "diagonal pattern": "A head that looks at the token itself or its neighbours, drawing a "
        "diagonal line on the attention map.",
    "block pattern": "A head that spreads its attention evenly within the token's own sentence.",
    "entropy": "How spread out a head's attention is, in nats: 0 means all attention on one "
        "token; spreading it evenly over n tokens gives log n.",
    "nats": "The unit of entropy when natural logarithms are used (1 nat is about 1.44 bits).",
    "gradient importance": "How much the model's loss would change if an attention weight "
        "changed a little (the size of dL/dA): a low value means the weight barely matters.",
    "aspect F1": "How well the model finds which aspects a review sentence talks about, from 0 "
        "to 100: it balances aspects found wrongly against aspects missed.",
    "4-way accuracy": "The share of aspects a review does talk about whose sentiment (positive, "
        "neutral, negative or conflict) the model gets right, in percent.",
    "mean loss": "How surprised the model is by the correct answers on average (its "
        "cross-entropy); lower is better, and it moves even when no answer flips.",
    "pruning": "Removing heads for good to make a model smaller; a pruning curve shows how the "
        "score holds up as more and more heads go.",
    "attention norm": "Attention weight times the size of what is passed along (Kobayashi et "
        "al. 2020): a big weight on a token that passes nothing along still moves nothing.",
    "fine-tuning": "Training an already trained model a little more on one task, here finding "
        "the sentiment of aspects in reviews.",
    "checkpoint": "A saved copy of a model's weights, for example after fine-tuning.",
    "aspect": "What a review sentence speaks about, such as the food or the service.",
    "opinion words": "The words that carry the judgement of an aspect (\"superb\", \"ignored\").",
    "QA-M": "Sun et al.'s way of asking about an aspect as a question sentence paired with "
        "the review (\"what do you think of the service of it?\"); the model picks the "
        "sentiment.",
    "NLI-M": "Like QA-M, but the second sentence is just the aspect's name (\"service\").",
    "QA-B": "Like QA-M, but one yes/no question per sentiment (\"the polarity of the service "
        "is positive\"); the most likely \"yes\" wins.",
    "NLI-B": "Like QA-B with a shorter second sentence (\"service - positive\").",
    "baseline": "A simple rule a head should beat to count as finding something: a random head, "
        "always the same offset, the most frequent word, or even attention.",
    "bootstrap interval": "A range for a score found by recomputing it on many resamples of the "
        "examples; 95% of those recomputations fall in it.",
    "cosine similarity": "How alike two attention maps are, from 1 (the same) down to 0 "
        "(nothing in common).",
    "RSA": "Representational similarity analysis: whether two models find the same token pairs "
        "alike at a layer (1 = the same geometry).",
    "CKA": "Centred kernel alignment: another score from 0 to 1 of how alike two models' "
        "internal representations are at a layer.",
    "UUAS": "Undirected unlabelled attachment score: the share of a sentence's word links "
        "(its dependency tree, ignoring direction) that a probe recovers.",
    "structural probe": "A small linear map trained to read a sentence's tree out of a layer's "
        "vectors (Hewitt and Manning 2019).",
    "dependency relation": "The grammatical link between two words, such as a subject (nsubj) "
        "or an object (obj) and the verb it belongs to.",
    "Spearman correlation": "Whether two rankings go up and down together, from -1 to 1.",
    "segment": "Which sentence of a pair a token belongs to: A (first) or B (second).",
    "query token": "The token whose attention is being looked at (the row of the map).",
    "hidden state": "The list of numbers (a vector) the model holds for one token after a "
        "layer; layer 0 is the embeddings, the numbers the model starts from.",
    "PCA": "Principal component analysis: the two directions along which a layer's token "
        "vectors differ most, used to draw them as points on a flat map.",
    "Procrustes alignment": "Turning (and possibly mirroring) one layer's map so it lines up "
        "as well as possible with the previous layer's, so that a point's move means something.",
    "t-SNE": "A way to draw many vectors on a flat map that keeps close neighbours close; the "
        "distances between far groups and the axes mean little.",
    "UMAP": "Like t-SNE, a flat map that keeps close neighbours close, usually faster on many "
        "points.",
    "linear probe": "A simple classifier trained on one layer's vectors to guess a property "
        "(part of speech, aspect word): high accuracy means the layer holds it in a simply "
        "readable form.",
    "majority baseline": "The accuracy of always guessing the most frequent answer; a probe "
        "must beat it to show anything.",
    "UPOS": "The universal part-of-speech tag of a word: NOUN, VERB, ADJ, DET and so on.",
    "anisotropy": "How much all of a layer's vectors point the same way: the mean cosine "
        "similarity of two random words' vectors (0 = no common direction, 1 = all alike).",
    "self-similarity": "How much one word keeps the same vector in different sentences: the "
        "mean cosine similarity of its vectors across its sentences.",
    "attribution": "Which input words a prediction rests on, by one method or another; different "
        "methods can give different answers.",
    "rollout": "Following what each word passes on through all the layers at once, by chaining "
        "the layers' tables (Abnar and Zuidema 2020).",
    "ALTI": "A way of tracing each word's share of every layer's output, counting the word's own "
        "copy and the normalisation as well as the attention (Ferrando et al. 2022).",
    "value zeroing": "Blanking out one word's contribution inside a layer and measuring how much "
        "every other word's result changes (Mohebbi et al. 2023).",
    "integrated gradients": "Adding up how the prediction changes as the input goes, step by "
        "step, from a blank version of the text to the real one; the parts add up to the change "
        "in the prediction (Sundararajan et al. 2017).",
    "gradient x input": "How sensitive the prediction is to each word, times the word itself: a "
        "quick, rough measure of importance.",
    "comprehensiveness": "How much the model's confidence falls when the words a method marks as "
        "most important are removed: high means the method found what the model used.",
    "sufficiency": "How much the model's confidence falls when only the words a method marks as "
        "most important are kept: low means those words are enough.",
    "leave-one-out": "Removing one word at a time and watching how the prediction changes.",
    "faithful": "An explanation is faithful when it shows what the model really used, not just "
        "what looks plausible to a person.",
    "gold label": "The correct answer of an example, as the data gives it.",
    "confidence": "How sure the model is of its answer: the probability it gives the label it "
        "picks, from 0 to 1.",
    "macro F1": "The F1 score (how well a label is found, balancing labels given wrongly against "
        "labels missed) computed for each label and averaged, so that a rare label counts as "
        "much as a common one.",
    "3-way accuracy": "Like 4-way accuracy, over the aspects whose sentiment is positive, "
        "neutral or negative (conflict left out).",
    "confusion matrix": "A table of how often each correct label got each answer: the diagonal "
        "holds the right answers, every other cell one kind of mistake.",
    "slice": "A group of examples that share something (the same correct label, the same aspect "
        "asked about, a similar length), measured on its own.",
    "counterfactual": "A copy of an input with one controlled change (another aspect asked, an "
        "opinion word turned into its opposite), to see whether the answer follows the change.",
    "flip rate": "The share of answers that change when every input is given a counterfactual of "
        "one kind.",
    "head role": "What a head mostly does, read from where it looks by a stated rule (looking "
        "at the previous word, resting on [SEP], finding a sentence's subject, finding the "
        "aspect's words...): a label for a pattern, not proof that the model relies on it.",
    "activation patching": "Running the model on one input while swapping in one part's inner "
        "result from a slightly changed input, to see how much of the change in the answer "
        "that part carries (0%: none of it, 100%: all of it).",
    "feature": "One direction of a sparse dictionary: it fires (takes a positive value) on the "
        "tokens whose vector points its way, ideally on tokens that share something one can "
        "name.",
    "sparse autoencoder": "A model trained to rewrite each token's vector as a sum of a few "
        "directions (features) out of many, and to rebuild the vector from them (SAE; Gao et "
        "al. 2024 keep the k largest).",
    "crosscoder": "A sparse autoencoder trained on two models at once: each feature has a "
        "direction in each model, so a feature whose direction exists in only one model marks "
        "what that model has alone (Lindsey et al. 2024).",
    "variance explained": "How much of the spread of the vectors a rebuilt version keeps, from "
        "0 to 100%: 100% rebuilds them exactly, 0% is no better than always guessing their "
        "average.",
    "dead feature": "A feature that fires on no token at all: dictionary space spent on "
        "nothing.",
    "splice": "Swapping a layer's real vectors for the dictionary's rebuilt ones while the "
        "model runs, to see whether the model still answers the same.",
    "Latent Scaling": "A check on a feature that seems to belong to one model only: does the "
        "other model's vector hold the same direction after all (Minder et al. 2025)? If so, "
        "the feature is an artefact of training, not something new.",
    "micro F1": "F1 counted over all the sentences' aspects together (not sentence by sentence "
        "and then averaged): from 0 to 100, it balances aspects found wrongly against aspects "
        "missed.",
    "noising": "Causal patching's copy from the counterfactual's run into the input's run, to "
        "see whether the model needs this part to keep its answer.",
    "denoising": "Causal patching's copy from the input's run into the counterfactual's run, to "
        "see whether this part is enough to bring the input's answer back.",
    "logit": "The model's raw score for an answer, before the scores become probabilities; the "
        "gap between two answers' logits says which one the model prefers, and by how much.",
}

# A few words for each term where it first appears on a page, in parentheses after it
# (ui.common.frame.explain.glossed, issue 49); the glossary's entry says the rest. The keys
# are what the pages write (a short form of a glossary term included: "Spearman", "bootstrap").
SHORT: dict[str, str] = {
    "NLI-M": "the review paired with the aspect's name alone",
    "QA-M": "the review paired with a question about the aspect",
    "micro F1": "0 to 100, aspects found wrongly and aspects missed balanced over all sentences",
    "aspect F1": "0 to 100: how well the model finds the aspects a sentence talks about",
    "bootstrap": "the score recomputed on many resamples of the examples, to see how much it "
                 "could vary",
    "RSA": "do the two models find the same word pairs alike?",
    "CKA": "a 0 to 1 score of how alike the two models' internal numbers are",
    "Spearman": "do two rankings go up and down together? -1 to 1",
    "ALTI": "each word's share of what every layer passes on",
    "noising": "the counterfactual's part copied into the input's run",
    "denoising": "the input's part copied into the counterfactual's run",
    "UPOS": "the part of speech: noun, verb, adjective...",
    "anisotropy": "how much all the vectors point the same way",
    "nats": "the unit of entropy: 0 is all attention on one word, more is more spread out",
    "entropy": "how spread out a head's attention is",
    "logit": "the model's raw score for an answer",
}

_WORD = {term: re.compile(r"(?<![\w\[])" + re.escape(term) + r"(?![\w\]])", re.I)
         for term in GLOSSARY}


def terms_in(text: str) -> list[str]:
    """The glossary's terms that ``text`` uses, in the glossary's order."""
    return [term for term, pattern in _WORD.items()
            if (pattern.search(text) if term[0] != "[" else term in text)]
