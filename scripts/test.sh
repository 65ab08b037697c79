#!/usr/bin/env bash
# Sets everything up and runs every test: the unit, lit, malformed-input and
# install tests in a normal build, the same under ASan+UBSan, and short
# libFuzzer runs of the parser and of the .npy/.npz and ONNX readers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)

cmake -S . -B build -G Ninja -DREMAT_BUILD_TESTS=ON -DREMAT_BUILD_BENCHMARKS=ON >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DREMAT_SANITIZE=ON -DREMAT_BUILD_TESTS=ON \
  -DREMAT_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-asan -j "$jobs"
# The sanitizers skip the slow label and the ten searches below, which take
# 35 to 140 s each under ASan (12 minutes of the run's 2 cores) and run code
# that smaller tests sanitize too; the normal build runs them all.
asan_skip='BudgetTest\.(TheSweepIsAParetoCurveTheBudgetSearchAgreesWith'
asan_skip+='|SharesOfThePlainPeakAreMetOnADeepMlp'
asan_skip+='|TheChainPlannerMeetsBudgetsNoCostlierThanKeptValuePlans'
asan_skip+='|AnUnreachableBudgetBuildsTheLowestPeakAndWarns)'
asan_skip+='|FitTest\.(AutoFitsALargerBatchThatIsBuiltAndMeasured|ZeroOverheadAllowsOnlyPlainAutodiff)'
asan_skip+='|CheckmateIlpTest\.(RelaxationAtALowerBudgetRoundsToAFittingSchedule|MatchesBruteForceOnRandomDags)'
asan_skip+='|ChainLeanRunsTest\.RandomChainsWithLateRunsAgainstExhaustiveSearch'
asan_skip+='|ChainDpTest\.MatchesIlpOnRandomChainsWithParamGradients'
ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE slow -E "^($asan_skip)\$"

# The parser and the .npy/.npz and ONNX readers under libFuzzer, each for a
# fixed seed and number of inputs (scripts/fuzz.sh says why).
bash scripts/fuzz.sh
