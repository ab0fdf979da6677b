#!/usr/bin/env python3
"""The dashboard (GET / on the control port) in a real browser: headless Debian chromium through
chromium-driver and python3-selenium, against a running `dibs enrich` with `dibs stub` as its API
(file mode: a JSON Lines file seeded by `dibs seed`, so no database is needed).

  1. without JavaScript (plain urllib): the counts are in the HTML;
  2. in the browser: the live counts move; Pause clicked in the page pauses the engine (seen in
     GET /status), Resume resumes it (and the counts move again); a screenshot is saved;
  3. the live controls: the rate set through the page (seen in /status), a failure reason retried
     and a worker released, each after the page's confirmation;
  4. an LLM run (tests/servers/llm_api.py): its tokens, their pace against the API's stated limit
     and their cost at --price, in the page.

Exit 0: passed; 1: failed; 77: skipped (chromium, chromedriver or selenium missing).

  test_dashboard.py --bin BUILD/bin [--screenshot FILE] [--history SECONDS]
"""
import argparse
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.request

SKIP = 77
WAIT_S = 30  # every wait for the page or the engine is bounded by this


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def browser_or_skip():
    """The webdriver module, or exit 77 saying what is missing."""
    missing = [name for name in ("chromium", "chromedriver") if not shutil.which(name)]
    try:
        from selenium import webdriver  # noqa: F401
    except ImportError:
        missing.append("python3-selenium")
    if missing:
        print("SKIP: the browser test needs " + ", ".join(missing) +
              " (Debian: apt-get install chromium chromium-driver python3-selenium; scripts/install-deps.sh)")
        sys.exit(SKIP)


class Lines:
    """A child's output, read on a thread (so its pipe never fills), searched with a deadline."""

    def __init__(self, stream):
        self.lines = queue.Queue()
        self.seen = []
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream):
        for line in stream:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, pattern, what):
        while True:
            try:
                line = self.lines.get(timeout=WAIT_S)
            except queue.Empty:
                fail(f"{what}: nothing matching {pattern!r} within {WAIT_S} s; output so far:\n" + "".join(self.seen))
            if line is None:
                fail(f"{what} ended before saying {pattern!r}; its output:\n" + "".join(self.seen))
            self.seen.append(line)
            m = re.search(pattern, line)
            if m:
                return m


class Run:
    """`dibs stub` and `dibs enrich --metrics-port 0` on a seeded JSON Lines file; stopped on exit."""

    def __init__(self, bin_dir, work):
        dibs = os.path.join(bin_dir, "dibs")
        self.children = []
        stub = self._start([dibs, "stub", "--port", "0", "--latency-ms", "20", "--big-rate", "0.02"])
        api = Lines(stub.stdout).wait_for(r"listening on (http://[0-9.]+:\d+)", "dibs stub").group(1)
        source = os.path.join(work, "ips.jsonl")
        subprocess.run([dibs, "seed", "--store", "jsonl:" + source, "--docs", "5000"], check=True,
                       stdout=subprocess.DEVNULL, timeout=WAIT_S)
        # Slow enough (--rate) that the run is still going when the test ends.
        self.enrich = self._start([dibs, "enrich", "--store", "jsonl:" + source, "--out", os.path.join(work, "out.jsonl"),
                                   "--url", api + "/json/{originatingIp}", "--concurrency", "4", "--rate", "40/s",
                                   "--no-progress", "--metrics-port", "0"], stderr=True)
        m = Lines(self.enrich.stderr).wait_for(r"controls on (http://127\.0\.0\.1:\d+)", "dibs enrich")
        self.base = m.group(1)

    def _start(self, argv, stderr=False):
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL if stderr else subprocess.PIPE,
                                 stderr=subprocess.PIPE if stderr else None, text=True)
        self.children.append(child)
        return child

    def stop(self):
        for child in reversed(self.children):
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in self.children:
            try:
                child.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()

    # ---- the control endpoints, as a program (curl) would call them --------------------------
    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=10) as r:
            return r.read().decode()

    def status(self):
        return json.loads(self.get("/status"))


def check_without_javascript(run):
    page = run.get("/")
    for field in ("completed", "failed", "in_flight", "pending", "done"):
        if not re.search(r'<dd id="' + field + r'">\d+</dd>', page):
            fail(f"GET / without JavaScript: no count for {field} in the HTML")
    print("ok: GET / carries the counts in its HTML")


def open_browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for arg in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1400",
                "--no-first-run", "--disable-extensions"):
        options.add_argument(arg)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")  # chromium refuses to run as root with its sandbox
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def count(driver, element_id):
    from selenium.webdriver.common.by import By
    text = driver.find_element(By.ID, element_id).text
    return int(text) if text.isdigit() else -1


def check_in_browser(run, driver, screenshot, history):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    wait = WebDriverWait(driver, WAIT_S)
    driver.get(run.base + "/")
    first = count(driver, "completed")
    wait.until(lambda d: count(d, "completed") > first, "the page's completed count never moved")
    wait.until(lambda d: count(d, "pending") >= 0 and d.find_element(By.ID, "state").text == "running",
               "the page never showed the store's pending count and the state running")
    print(f"ok: the live counts move ({first} -> {count(driver, 'completed')} completed)")

    driver.find_element(By.ID, "pause").click()
    wait.until(lambda d: run.status()["paused"] is True, "/status never said paused after the page's Pause")
    wait.until(lambda d: d.find_element(By.ID, "state").text == "paused", "the page never showed paused")
    print("ok: Pause in the page paused the engine (/status: paused)")

    driver.find_element(By.ID, "resume").click()
    wait.until(lambda d: run.status()["paused"] is False, "/status never said running after the page's Resume")
    wait.until(lambda d: d.find_element(By.ID, "state").text == "running", "the page never showed running")
    resumed_at = run.status()["completed"]
    wait.until(lambda d: run.status()["completed"] > resumed_at, "the engine did not complete anything after Resume")
    print("ok: Resume in the page resumed the engine")

    # A chart worth a screenshot: some seconds of history, drawn.
    WebDriverWait(driver, WAIT_S + history).until(
        lambda d: len(json.loads(run.get("/history"))["samples"]) >= history, f"/history never had {history} samples")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#chart_rate path") and
               d.find_elements(By.CSS_SELECTOR, "#chart_latency path"), "the page drew no chart")
    os.makedirs(os.path.dirname(os.path.abspath(screenshot)), exist_ok=True)
    if not driver.save_screenshot(screenshot):
        fail("the screenshot could not be saved to " + screenshot)
    print("ok: screenshot saved to " + screenshot)


def click_first(wait, css, what):
    """Clicks the first element `css` names once there is one. The page redraws its lists on every
    poll, so an element found a moment ago may be gone (stale): then it is looked up again."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    def attempt(d):
        try:
            found = d.find_elements(By.CSS_SELECTOR, css)
            if not found:
                return False
            found[0].click()
            return True
        except StaleElementReferenceException:
            return False
    wait.until(attempt, what)


def check_live_controls(run, driver):
    """Rate change, retry of a failure reason, release of a worker: through the page."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    wait = WebDriverWait(driver, WAIT_S)
    box = driver.find_element(By.ID, "rate_input")
    box.clear()
    box.send_keys("600/min")
    driver.find_element(By.ID, "rate_set").click()
    wait.until(lambda d: abs((run.status().get("rate_per_second") or 0) - 10) < 1e-6,
               "/status never said rate_per_second 10 after the page set 600/min")
    print("ok: the rate set through the page")

    # The stub answers some addresses with a 2 MiB body (--big-rate): failures with a reason.
    click_first(wait, "#failures button.retry", "no failure reason to retry")
    wait.until(lambda d: d.switch_to.alert, "no confirmation before the retry").accept()
    wait.until(lambda d: "retried" in d.find_element(By.ID, "message").text, "the page never told what it retried")
    message = driver.find_element(By.ID, "message").text
    if not re.search(r'"retried":[1-9]', message):
        fail("the page's retry put no failed item back: " + message)
    print("ok: retry through the page: " + message)

    click_first(wait, "#workers button.release", "no worker to release")
    wait.until(lambda d: d.switch_to.alert, "no confirmation before the release").accept()
    wait.until(lambda d: "released" in d.find_element(By.ID, "message").text, "the page never told what it released")
    message = driver.find_element(By.ID, "message").text
    if not re.search(r'"released":[1-9]', message):
        fail("the page's release freed no lease: " + message)
    wait.until(lambda d: run.status().get("operator_released", 0) > 0, "/status never counted the release")
    print("ok: release through the page: " + message)


class LlmRun(Run):
    """An LLM API of the project's own (tests/servers/llm_api.py, OpenAI-like, metering tokens a
    minute and stating its limit in headers) and `dibs enrich --price --metrics-port 0` on reviews."""

    def __init__(self, bin_dir, work):
        dibs = os.path.join(bin_dir, "dibs")
        self.children = []
        api = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "servers", "llm_api.py")
        self.children.append(subprocess.Popen(["/usr/bin/python3", api, work, "llm", "--tpm", "20000", "--latency-ms", "50"],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        port_file = os.path.join(work, "llm.port")
        WaitFor(lambda: os.path.exists(port_file), "llm_api.py never wrote its port")
        port = open(port_file).read().strip()
        source = os.path.join(work, "reviews.jsonl")
        with open(source, "w") as f:
            for i in range(400):
                f.write(json.dumps({"id": i, "text": "review %d: the kettle \"boils\" fast, lid %s" % (i, "ok" if i % 3 else "loose")}) + "\n")
        body = ('{"model": "gpt-4o-mini", "max_tokens": 30, "messages": [{"role": "user", '
                '"content": "Label this review as JSON {\\"label\\": ...}: {text}"}]}')
        # Slow enough (--rate) that the run is still going when the test ends.
        self.enrich = self._start([dibs, "enrich", "--store", "jsonl:" + source, "--out", os.path.join(work, "reviews.out.jsonl"),
                                   "--url", "http://127.0.0.1:%s/v1/chat/completions" % port, "--method", "POST",
                                   "--body", body, "--price", "input=0.15/1M,output=0.60/1M", "--rate", "4/s",
                                   "--no-progress", "--metrics-port", "0"], stderr=True)
        m = Lines(self.enrich.stderr).wait_for(r"controls on (http://127\.0\.0\.1:\d+)", "dibs enrich")
        self.base = m.group(1)


def WaitFor(condition, what):
    """`condition` polled until true, WAIT_S at most (a child process's file appearing)."""
    import time
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            fail(what)
        time.sleep(0.05)


def check_tokens(run, driver):
    """An LLM run's tokens, their pace against the limit the API's headers state, and their cost, in the page."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    wait = WebDriverWait(driver, WAIT_S)
    driver.get(run.base + "/")
    shape = re.compile(r"(\d+) \((\d+) input, (\d+) output\)")

    def tokens(d):
        m = shape.fullmatch(d.find_element(By.ID, "tokens").text)
        return tuple(int(g) for g in m.groups()) if m and int(m.group(1)) > 0 else None
    wait.until(tokens, "the page never showed the run's tokens")
    # The pace shows once two polls are 2 s apart; the limit is the API's (its headers: 20000).
    wait.until(lambda d: re.fullmatch(r"\d+/min \([0-9.]+ % of 20000/min\)", d.find_element(By.ID, "tokens_rate").text),
               "the page never showed the tokens a minute against the API's limit of 20000: " +
               driver.find_element(By.ID, "tokens_rate").text)
    # The cost and the tokens of one poll agree with the price given (0.15 and 0.60 a million).
    for _ in range(3):
        all_, inp, out = tokens(driver)
        cost = float(driver.find_element(By.ID, "api_cost").text)
        if tokens(driver) == (all_, inp, out):
            break
    if all_ != inp + out:
        fail(f"the page's tokens do not add up: {all_} != {inp} + {out}")
    expected = inp * 0.15e-6 + out * 0.60e-6
    if abs(cost - expected) > max(1e-9, expected * 0.005):
        fail(f"the page's cost {cost} is not {inp} input and {out} output tokens at the price ({expected})")
    status = run.status()["http"]["tokens"]
    if status["input"] < inp or status["output"] < out:
        fail(f"the page shows more tokens than /status: {inp}/{out} against {status}")
    print(f"ok: the page shows the tokens ({all_}), their pace ({driver.find_element(By.ID, 'tokens_rate').text}) "
          f"and their cost ({cost})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="the directory of the dibs binary")
    parser.add_argument("--screenshot", default="dashboard.png", help="where to save the page's screenshot")
    parser.add_argument("--history", type=int, default=8, metavar="N",
                        help="seconds of history the charts show before the screenshot (60 for the docs' one)")
    args = parser.parse_args()
    browser_or_skip()
    with tempfile.TemporaryDirectory(prefix="dibs-dashboard-") as work:
        driver = None
        try:
            run = Run(args.bin, work)
            try:
                check_without_javascript(run)
                driver = open_browser()
                check_in_browser(run, driver, args.screenshot, args.history)
                check_live_controls(run, driver)
            finally:
                run.stop()
            llm = LlmRun(args.bin, work)
            try:
                check_tokens(llm, driver)
            finally:
                llm.stop()
        finally:
            if driver:
                driver.quit()
    print("PASS")


if __name__ == "__main__":
    main()
