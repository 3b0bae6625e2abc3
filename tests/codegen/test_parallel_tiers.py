"""The choice between a parallel program's serial and parallel builds (parallel.BuildChoice):
driven with made-up call times (no timed assertions), and a smoke test of programs called from
several threads while the choice flips, whose results must equal the serial build's bit for bit."""
import threading

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage.codegen import parallel

pytestmark = pytest.mark.numba_path  # tests of the Numba build (tests/conftest.py)


def run(choice, calls, serial_s, parallel_s):
    """Make `calls` calls that take `serial_s` on the serial build and `parallel_s` on the
    parallel one; the list of builds they ran (True: parallel)."""
    ran = []
    for _ in range(calls):
        on_parallel = choice.parallel
        start = choice.start()
        if start is not None:
            choice.record(on_parallel, parallel_s if on_parallel else serial_s)
        ran.append(on_parallel)
    return ran


def trial_starts(ran):
    """Indices of the calls where a run of parallel calls begins."""
    return [i for i in range(1, len(ran)) if ran[i] and not ran[i - 1]]


def test_the_serial_build_runs_until_its_calls_have_cost_the_tier_up_time():
    choice = parallel.BuildChoice()
    ran = run(choice, 6000, 1e-4, 1e-5)  # 0.6 s of serial calls
    assert not any(ran) and choice.phase == "rent"
    assert run(choice, 2, 1e-4, 1e-5) == [False, True]  # the call past TIER_UP_S ends the rent


def test_a_slower_parallel_build_goes_back_to_serial_and_backs_off():
    choice = parallel.BuildChoice()
    ran = run(choice, 20_000, 1e-4, 3e-4)
    assert choice.phase == "serial" and not choice.parallel
    assert choice.serial_mean == pytest.approx(1e-4) and choice.trial_mean == pytest.approx(3e-4)
    # the first loss confirmed by a second trial, then a loss after RETRY_S of serial calls
    assert choice.trials == 3 and choice.losses == 2
    assert choice.retry_s == 4 * parallel.RETRY_S  # doubled per lost trial
    assert sum(ran) <= 3 * (parallel.TRIAL_S / 3e-4 + 2)  # each trial: TRIAL_S of calls


def test_one_noisy_lost_trial_is_confirmed_before_the_program_goes_serial():
    choice = parallel.BuildChoice()
    while choice.phase == "rent":  # TIER_UP_S of serial calls
        run(choice, 1, 2e-4, 1e-4)
    assert choice.phase == "trial"
    while choice.phase == "trial":  # one trial lost to a busy moment
        run(choice, 1, 2e-4, 5e-4)
    assert choice.phase == "resample" and choice.losses == 0 and choice.trials == 1
    run(choice, 2000, 2e-4, 1e-4)  # the second trial: the parallel build is faster after all
    assert choice.phase == "parallel" and choice.losses == 0 and choice.trials == 2
    assert choice.retry_s == parallel.RETRY_S


def test_a_clear_loss_ends_the_trial_after_its_first_timed_call():
    choice = parallel.BuildChoice()
    ran = run(choice, 20_000, 1e-4, 1e-3)
    assert choice.trials == 3 and choice.losses == 2  # the first loss confirmed
    assert sum(ran) == 3 * 2  # per trial: the untimed first call and one 10x slower


def test_a_faster_parallel_build_stays_and_is_rechecked_less_and_less_often():
    choice = parallel.BuildChoice()
    ran = run(choice, 200_000, 2e-4, 1e-4)
    assert choice.parallel and choice.phase == "parallel"
    assert choice.losses == 0 and choice.trials >= 3
    assert choice.recheck_s == min(parallel.RECHECK_S * 2 ** choice.trials, parallel.MAX_WAIT_S)
    after_rent = ran[ran.index(True):]
    assert sum(after_rent) / len(after_rent) > 0.9  # the re-checks' serial calls are few


def test_a_trial_slower_by_less_than_the_margin_keeps_the_parallel_build():
    choice = parallel.BuildChoice()
    run(choice, 8000, 1e-4, 1.05e-4)
    assert choice.parallel and choice.trials == 1 and choice.losses == 0


def test_the_wait_between_trials_doubles_up_to_the_cap():
    choice = parallel.BuildChoice()
    ran = run(choice, 1_500_000, 1e-4, 1e-3)
    starts = trial_starts(ran)[1:]  # the first trial's loss is confirmed by the second at once
    assert starts[0] - trial_starts(ran)[0] < parallel.TRIAL_S / 1e-4 + 10
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert len(gaps) >= 6
    # each gap: the wait (RETRY_S, doubling) plus a resample and a trial of fewer calls
    waits = [min(parallel.RETRY_S * 2 ** k, parallel.MAX_WAIT_S) / 1e-4 for k in range(len(gaps))]
    for gap, wait in zip(gaps, waits):
        assert wait < gap < wait + 1000, (gaps, waits)
    assert choice.retry_s == parallel.MAX_WAIT_S


def test_a_machine_whose_load_drops_gets_the_parallel_build_back():
    choice = parallel.BuildChoice()
    run(choice, 100_000, 1e-4, 1e-3)  # loaded: parallel 10x slower
    assert not choice.parallel and choice.losses >= 2
    waited = choice.retry_s
    ran = run(choice, int(2 * waited / 1e-4), 1e-4, 5e-5)  # quiet: parallel 2x faster
    assert choice.parallel and ran[-1]
    assert choice.retry_s == parallel.RETRY_S  # a won trial resets the backoff


def test_a_machine_whose_load_rises_goes_back_to_serial():
    choice = parallel.BuildChoice()
    run(choice, 100_000, 2e-4, 1e-4)
    assert choice.parallel
    run(choice, int(2 * choice.recheck_s / 1e-3) + 10_000, 2e-4, 1e-3)  # the parallel build slows down
    assert not choice.parallel and choice.losses >= 1


@pytest.mark.parametrize("serial_s, parallel_s, bound", [(2.0, 1.0, 1.06), (1.0, 20.0, 1.15)])
def test_programs_with_long_calls_spend_a_small_share_of_their_time_on_checks(serial_s, parallel_s, bound):
    # a trial and a resample take a few calls whatever they cost: the waits grow to match
    choice = parallel.BuildChoice()
    ran = run(choice, 3000, serial_s, parallel_s)
    assert choice.parallel == (parallel_s < serial_s) and choice.trials >= 3
    spent = sum(parallel_s if r else serial_s for r in ran)
    assert spent < bound * len(ran) * min(serial_s, parallel_s)  # without CHECK_SHARE: 1.10 and 2.06


def test_calls_of_the_other_build_are_dropped():
    choice = parallel.BuildChoice()
    choice.record(True, 5.0)  # a parallel call during the serial rent (it began in an older phase)
    assert choice.phase == "rent" and choice._spent == 0
    run(choice, 8000, 2e-4, 1e-4)
    assert choice.phase == "parallel"
    choice.record(False, 5.0)  # a serial call that began before the trial
    assert choice.phase == "parallel" and choice._spent < 1


def test_between_trials_one_call_in_sample_every_is_timed():
    choice = parallel.BuildChoice()
    run(choice, 8000, 2e-4, 1e-4)
    assert choice.phase == "parallel"
    starts = [choice.start() for _ in range(4 * parallel.SAMPLE_EVERY)]
    assert sum(s is not None for s in starts) == 4


def test_a_negative_tier_up_time_runs_the_parallel_build_from_the_first_call(monkeypatch):
    monkeypatch.setattr(parallel, "TIER_UP_S", -1.0)
    choice = parallel.BuildChoice()
    assert run(choice, 1, 1e-4, 1e-4) == [True]


def test_concurrent_callers_leave_a_consistent_state():
    choice = parallel.BuildChoice()
    errors = []

    def caller(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(20_000):
                on_parallel = choice.parallel
                start = choice.start()
                if start is not None:
                    choice.record(on_parallel, float(rng.exponential(3e-4 if on_parallel else 1e-4)))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert (choice.parallel, choice._every) == parallel.BuildChoice.PHASES[choice.phase]
    assert choice.trials >= 1 and choice.losses >= 1


# --- compiled programs: several threads, builds switching under them ------------------------------


def _quick_switching(monkeypatch):
    """Constants that make a BuildChoice switch builds every few calls."""
    for name, value in [("TIER_UP_S", 0.0), ("TRIAL_S", 0.0), ("TRIAL_MIN_CALLS", 1),
                        ("RETRY_S", 1e-9), ("RECHECK_S", 1e-9), ("MAX_WAIT_S", 1e-9), ("CHECK_SHARE", 1e9)]:
        monkeypatch.setattr(parallel, name, value)


def _program(x, enabled, monkeypatch):
    monkeypatch.setattr(parallel, "_ENABLED", enabled)
    f = lambda x: jnp.where(x > 0, x, jnp.exp(x) - 1) * 1.05 + x.sum(-1, keepdims=True)  # noqa: E731
    return omnistage.jit(f, backend="cpu").lower(x).compile()


def test_threads_calling_a_program_whose_build_switches_get_the_serial_bits(monkeypatch):
    from omnistage.codegen import executable

    monkeypatch.setattr(executable, "_builder_busy", lambda: False)  # a library builder left by another test
    monkeypatch.setattr(parallel, "PARALLEL_MIN_WORK", 1)
    _quick_switching(monkeypatch)
    x = np.random.default_rng(0).standard_normal((64, 257)).astype(np.float32)
    expected = np.asarray(_program(x, False, monkeypatch)(x)).tobytes()
    compiled = _program(x, True, monkeypatch)
    assert "numba.prange(" in compiled.as_text()
    choice = compiled.executable._tier
    results, errors = [], []
    # the call ending the rent, then one that starts the parallel build's background compile
    results += [np.asarray(compiled(x)).tobytes() for _ in range(2)]
    compiled.executable.tier_up_thread.join()

    def caller():
        try:
            for _ in range(150):
                results.append(np.asarray(compiled(x)).tobytes())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=caller) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 602 and all(r == expected for r in results)
    assert compiled.executable._parallel_ready and choice.trials >= 2  # both builds ran


def test_a_rent_with_threads_is_followed_by_a_serial_resample_before_the_trial():
    """rent_threads: the rent's calls may use threads (their products' blocks), so they do not
    stand for the serial build: a resample on one thread gives the serial mean the trial is
    compared with."""
    choice = parallel.BuildChoice(rent_threads=True)
    assert choice.phase == "rent" and choice.threads_allowed
    run(choice, 6001, 1e-4, 1e-5)  # the rent's 0.6 s, at a made-up threaded speed
    assert choice.phase == "resample" and not choice.threads_allowed and not choice.parallel
    run(choice, 1000, 3e-4, 1e-4)  # the resample: one-thread serial calls
    assert choice.serial_mean == pytest.approx(3e-4)
    assert choice.trials >= 1 and choice.losses == 0 and not choice.threads_allowed


def test_without_rent_threads_no_phase_allows_threads_in_serial_calls():
    choice = parallel.BuildChoice()
    seen = set()
    for _ in range(20_000):
        seen.add(choice.threads_allowed)
        run(choice, 1, 1e-4, 2e-4)
    assert seen == {False}
