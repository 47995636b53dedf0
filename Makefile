# pydpowl — every target sets the machine up first (idempotent, see scripts/setup.sh).
PY := .venv/bin/python
# The set-up installs R and DPpack, so tests needing them must run: a skip is an error.
export PYDPOWL_REQUIRE_R := 1

.PHONY: setup run test test-fast check lint typecheck lint-r test-r test-slow simulate tune validate validate-full audit audit-full \
	bench bench-cold bench-dask study-multiarm-analysis study-multiarm-objective study-stage-split study-owl-r-mechanism \
	bench-dask-csv bench-family bench-family-r bench-r-worker lint clean coverage propensity-study policy-eval utility \
	utility-full docs

setup:
	@bash scripts/setup.sh

## The main job: CYP-GUIDES-style case study (Table 1 and a PNG) in results/casestudy
run: setup
	$(PY) -m pydpowl.cli casestudy --out results/casestudy

## The whole default test suite: the static checks, then Python, the R front end, quick validation against DPpack
test: setup check
	$(PY) -m pytest -q
	@if [ -d rpkg/pydpowl/tests ]; then Rscript scripts/run_r_tests.R; fi

## pytest only, against the existing set-up (no set-up, no static checks, no R testthat): the edit-test loop
test-fast:
	@test -x $(PY) || { echo "test-fast: no $(PY); run make setup first" >&2; exit 1; }
	$(PY) -m pytest -q $(PYTEST_ARGS)

## Static checks, run by `make test` and so by CI: flake8 (pycodestyle + pyflakes), mypy, lintr
check: lint typecheck lint-r

## flake8 on all the Python, the R package's included (settings and the ignores' reasons: setup.cfg)
lint: setup
	$(PY) -m flake8 pydpowl r_reference validation tests benchmarks scripts rpkg/pydpowl/inst/python

## mypy on the Python that ships or runs in CI (settings and each exception's reason: pyproject.toml)
typecheck: setup
	$(PY) -m mypy

## lintr on the R package, its tests and its vignette (settings and reasons: scripts/lint_r.R, rpkg/pydpowl/.lintr)
lint-r: setup
	Rscript scripts/lint_r.R

test-r: setup
	Rscript scripts/run_r_tests.R

test-slow: setup
	$(PY) -m pytest -q -m slow

simulate: setup
	$(PY) -m pydpowl.cli simulate --out results/simulate

tune: setup
	$(PY) -m pydpowl.cli tune --out results/tune

## Utility study of the private mechanisms (docs/utility.md): reduced grid, about 5 minutes
utility: setup
	$(PY) -m pydpowl.cli utility --jobs 2 --out results/utility

## The full grid (3 designs x 4 n x 5 epsilon x 6 mechanisms x 100 repetitions), about an hour on 2 cores
utility-full: setup
	$(PY) -m pydpowl.cli utility --full --jobs 2 --backend numba --out results/utility

validate: setup
	$(PY) -m validation --quick --out results/validation-quick

validate-full: setup
	$(PY) -m validation --out results/validation

## Coverage of the private analysis's intervals: 18 cells x 500 replications (about 1 min)
coverage: setup
	$(PY) -m pydpowl.studies.coverage --out results/coverage

## Estimated propensities: composition (DP propensity model, C = 0) vs Proposition 8 (about 6 min)
propensity-study: setup
	$(PY) -m pydpowl.studies.propensity_comparison --out results/propensity

## DP policy evaluation (DP-LSW, DP-LSL on the lazy chain, m up to 1e6): figure and table (about 25 s)
policy-eval: setup
	$(PY) -m pydpowl.cli policy-eval --out results/policy-eval

audit: setup
	$(PY) -m validation.audit --quick --out results/audit-quick

audit-full: setup
	$(PY) -m validation.audit --out results/audit

bench: setup
	$(PY) benchmarks/bench_solver.py
	$(PY) benchmarks/bench_rrandom.py
	Rscript rpkg/bench_svmDP.R

## Whole processes as users run them (read a CSV, fit once): Python, R + DPpack, R + pydpowl
bench-cold: setup
	$(PY) benchmarks/bench_cold.py

## DP-OWL on Dask (LocalCluster of 2 processes) vs in memory vs DPpack, data written chunk by chunk to disk.
## The issue's full grid (writes about 5 GB, about 20 minutes): make bench-dask BENCH_DASK_ARGS="--sizes 1e6,1e7,1e8"
BENCH_DASK_ARGS ?= --sizes 1e6,1e7
bench-dask: setup
	$(PY) benchmarks/bench_dask.py $(BENCH_DASK_ARGS)

## pydpowl fit --engine dask on CSV files vs dask.dataframe.read_csv + the same fit vs pandas in memory (fresh processes).
## The issue's size (writes about 2 GB under the temp dir, removed afterwards):
## make bench-dask-csv BENCH_DASK_CSV_ARGS="--n 2e7 --files 40"
BENCH_DASK_CSV_ARGS ?= --n 2e6 --files 40
bench-dask-csv: setup
	$(PY) benchmarks/bench_dask_csv.py $(BENCH_DASK_CSV_ARGS)

## DPpack's ERM family (svmDP, LogisticRegressionDP, LinearRegressionDP): warm fits and whole scripts vs DPpack
bench-family: setup
	$(PY) benchmarks/bench_family.py --cold

## The same family from R: pydpowl's R drop-ins vs DPpack, whole Rscript runs and warm fits (median of 5)
bench-family-r: setup
	$(PY) benchmarks/bench_family_r.py

## The R worker as users meet it: Ctrl-C during a long fit (latency, 5 fresh sessions), the call after it, round trips
bench-r-worker: setup
	$(PY) benchmarks/bench_r_worker.py

## The whole private analysis with three arms (pydpowl simulate --design multiarm's design): value of the private
## rule vs the non-private rule and the best single arm, interval widths and coverage (n 1500, epsilon 1, 50 runs;
## MULTIARM_ANALYSIS_ARGS="... --mechanism output" for the paper's mechanism)
MULTIARM_ANALYSIS_ARGS ?= --n 1500 --epsilon 1 --runs 50
study-multiarm-analysis: setup
	$(PY) benchmarks/multiarm_analysis.py $(MULTIARM_ANALYSIS_ARGS)

## K-arm rules: objective perturbation with residual weights (the default) vs output perturbation, 3 arms,
## n 500/1500/5000, epsilon 0.5/1/2/5, 100 repetitions: value, regret and agreement (about 1 min; docs/utility.md)
MULTIARM_OBJECTIVE_ARGS ?= --runs 100
study-multiarm-objective: setup
	$(PY) benchmarks/multiarm_objective.py $(MULTIARM_OBJECTIVE_ARGS) --out results/multiarm-objective

## Equal vs non-equal budget split across the stages of a regime (sim_Kstage design): make study-stage-split
study-stage-split: setup
	$(PY) benchmarks/stage_split.py $(STAGE_SPLIT_ARGS)

## R owl(): the default mechanism vs mechanism = "output" on sim_Kstage data: make study-owl-r-mechanism
study-owl-r-mechanism: setup
	Rscript benchmarks/owl_r_mechanism.R $(OWL_R_MECHANISM_ARGS)

## The guides in docs/ as a static site in results/site (mkdocs, offline; not part of `make test`)
docs: setup
	$(PY) -m mkdocs build --strict

clean:
	rm -rf results .pytest_cache .mypy_cache
