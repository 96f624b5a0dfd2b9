"""analysis.representations.logistic (issue 48): every fold of a layer's probe at once in torch
is scikit-learn's LogisticRegression on StandardScaler'd vectors: the same weights at a tight
tolerance (multinomial, binomial, a class missing from a fold), and at the study's tolerance the
same accuracies as the reference (bench/references/representations.py) within 0.5 points on the same
folds."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from analysis.representations.logistic import fit_folds
from analysis.representations.probes import _folds

from bench.references import representations as reference_probes


def _sklearn_fit(x, y, train, tol=1e-4):
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    x = np.asarray(x, np.float64)  # the reference in float64
    scaler = StandardScaler().fit(x[train])
    clf = LogisticRegression(max_iter=5000, tol=tol)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(scaler.transform(x[train]), y[train])
    return clf


def _planted(n=400, d=6, k=3, seed=0, scale=1.0):
    """Correlated, unevenly scaled vectors with k overlapping classes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    mix = rng.normal(size=(d, d))
    x = (rng.normal(size=(n, d)) + 1.2 * np.eye(k, d)[y]) @ mix
    x = x * np.linspace(0.5, 30.0, d) * scale + np.linspace(-5, 5, d)
    return x.astype(np.float32), y


@pytest.mark.parametrize("precondition", [True, False])
def test_the_weights_are_scikit_learns_at_a_tight_tolerance(precondition):
    """Asked for a gradient of 1e-5, the weights in standardised coordinates are
    scikit-learn's at 1e-10 within 1e-4: the same loss, penalty and standardisation, folded into
    the weights; whitened or not (a change of variables only). float32's products may end the
    line search just short of 1e-5, by the CPU's order of summation (an AMD EPYC stopped one
    fold at 1.5e-5, its weights within 8e-5 of scikit-learn's): the gradient reached is
    checked against 2e-5, not the ``converged`` flag."""
    x, y = _planted()
    splits = [(np.arange(0, 300), np.arange(300, 400)), (np.arange(100, 400), np.arange(100))]
    fits = fit_folds(x, y, splits, 3, tol=1e-5, max_iter=3000, precondition=precondition)
    for (train, test), fit in zip(splits, fits):
        clf = _sklearn_fit(x, y, train, tol=1e-10)
        assert fit.gradient <= 2e-5, fit.gradient
        np.testing.assert_allclose(fit.weights, clf.coef_.T, atol=1e-4)
        b = fit.intercept - fit.intercept.mean()  # softmax: the intercepts up to a shift
        np.testing.assert_allclose(b, clf.intercept_ - clf.intercept_.mean(), atol=1e-4)
        x64 = x.astype(np.float64)
        scaled = (x64[test] - x64[train].mean(0)) / x64[train].std(0)
        assert (fit.predictions == clf.predict(scaled)).all()


def test_two_classes_are_the_binomial_model_and_a_missing_class_is_never_predicted():
    x, y = _planted(k=3, seed=2)
    two = y.copy()
    two[two == 2] = 1  # two classes: scikit-learn's binomial loss and penalty
    splits = [(np.arange(0, 300), np.arange(300, 400))]
    fit = fit_folds(x, two, splits, 2, tol=1e-5, max_iter=3000)[0]
    clf = _sklearn_fit(x, two, splits[0][0], tol=1e-10)
    np.testing.assert_allclose(fit.weights[:, 0], 0.0)  # the first class fixed at zero
    np.testing.assert_allclose(fit.weights[:, 1], clf.coef_[0], atol=1e-4)
    assert fit.intercept[1] - fit.intercept[0] == pytest.approx(clf.intercept_[0], abs=1e-4)
    # class 2 absent from this fold's training words (it keeps 3 columns): never predicted,
    # and the fold is the binomial model of the two it has
    train = np.flatnonzero(y[:300] != 2)
    fit3 = fit_folds(x, y, [(train, np.arange(300, 400))], 3, tol=1e-5, max_iter=3000)[0]
    assert set(fit3.predictions) <= {0, 1}
    clf3 = _sklearn_fit(x, y, train, tol=1e-10)
    np.testing.assert_allclose(fit3.weights[:, 1] - fit3.weights[:, 0], clf3.coef_[0],
                               atol=1e-4)


def test_one_class_in_a_fold_predicts_it():
    x, y = _planted(n=60)
    y = np.where(np.arange(60) < 40, 1, 0)
    fit = fit_folds(x, y, [(np.arange(40), np.arange(40, 60))], 2)[0]
    assert (fit.predictions == 1).all() and fit.steps == 0


def test_same_accuracies_as_scikit_learn_on_the_same_folds():
    """The study's tolerance against the reference on 2,400 'words' of 48 correlated
    dimensions and 6 classes in 300 'sentences', 5 folds: within 0.5 points (they agree on
    almost every word)."""
    rng = np.random.default_rng(5)
    n, d, k = 2400, 48, 6
    y = rng.integers(0, k, n)
    mix = rng.normal(size=(d, d)) / np.sqrt(d)
    x = ((rng.normal(size=(n, d)) + 0.9 * np.eye(k, d)[y] * 3) @ mix * 4.0).astype(np.float32)
    groups = np.arange(n) // 8
    splits, _ = _folds(groups, 5)
    fits = fit_folds(x, y, splits, k)
    ours = np.empty(n, dtype=np.int64)
    for (_, test), fit in zip(splits, fits):
        ours[test] = fit.predictions
    acc_ref, ref = reference_probes.probe_accuracy(x, y, splits)
    acc = float((ours == y).mean())
    assert 0.5 < acc < 0.99  # neither trivial nor separable
    assert abs(acc - acc_ref) <= 0.005
    assert (ours == ref).mean() >= 0.97
    assert all(f.converged for f in fits)


def test_fewer_words_than_twice_the_dimensions_step_unwhitened_to_the_same_optimum():
    """A small corpus (60 training words, 64 dimensions: a rank-deficient correlation matrix)
    is fitted without whitening (``whitens``), in far fewer steps than whitened, to
    scikit-learn's weights; 2 words per dimension or more are whitened."""
    from analysis.representations.logistic import whitens

    assert not whitens(60, 64) and not whitens(127, 64) and whitens(128, 64)
    rng = np.random.default_rng(3)
    n, d = 80, 64
    y = rng.integers(0, 3, n)
    x = (rng.normal(size=(n, d)) + 1.5 * np.eye(3, d)[y]).astype(np.float32)
    splits = [(np.arange(0, 60), np.arange(60, 80))]
    auto = fit_folds(x, y, splits, 3, tol=1e-5, max_iter=3000)[0]
    plain = fit_folds(x, y, splits, 3, tol=1e-5, max_iter=3000, precondition=False)[0]
    white = fit_folds(x, y, splits, 3, tol=1e-5, max_iter=3000, precondition=True)[0]
    assert auto.steps == plain.steps and (auto.weights == plain.weights).all()
    assert auto.converged and white.converged and auto.steps < white.steps
    clf = _sklearn_fit(x, y, splits[0][0], tol=1e-10)
    # the penalty alone holds the weights in the directions no word spans: at a gradient of
    # 1e-5 they are within 5e-4 of the optimum (the weights here are ~0.1 to 0.5)
    np.testing.assert_allclose(auto.weights, clf.coef_.T, atol=5e-4)
    x64 = x.astype(np.float64)
    train, test = splits[0]
    scaled = (x64[test] - x64[train].mean(0)) / x64[train].std(0)
    assert (auto.predictions == clf.predict(scaled)).all()
