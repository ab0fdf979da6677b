// What the two peer drivers (graphile_drain.js, pgboss_drain.js) share: their flags, the jobs'
// addresses, the job bodies (no-op, or a GET of the stub on a kept-alive connection), and the
// split of a drain over worker processes whose figures are added up into one JSON line.
"use strict";
const http = require("http");
const { fork } = require("child_process");

// --name value pairs; a bare first word is the action (enqueue, drain).
function parseArgs(argv) {
  const args = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith("--")) args[argv[i].slice(2)] = argv[++i];
    else args._.push(argv[i]);
  }
  return args;
}

function intArg(args, name, fallback) {
  return args[name] === undefined ? fallback : parseInt(args[name], 10);
}

// Public-looking IPv4 addresses, the same kind dibs seeds (the stub answers any).
function* addresses(n) {
  let x = 0x9e3779b9;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    yield `${11 + (x >>> 24) % 200}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${1 + (x & 127)}`;
  }
}

// The job body: nothing, or GET url+ip and parse the JSON answer (dibs parses it too).
function makeJob(url, sockets) {
  if (!url) return async () => {};
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  return (ip) =>
    new Promise((resolve, reject) => {
      const req = http.get(url + ip, { agent }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (body += c));
        res.on("end", () => {
          if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}`));
          try {
            resolve(JSON.parse(body));
          } catch (e) {
            reject(e);
          }
        });
      });
      req.on("error", reject);
    });
}

function now() {
  return performance.timeOrigin + performance.now();
}

// In a worker process: time `drain` (which returns the jobs it did) and its CPU, and send the
// figures to the parent.
// `drain` resolves to { jobs, failed }.
async function reportChild(drain) {
  const cpu0 = process.cpuUsage();
  const start = now();
  const { jobs, failed } = await drain();
  const end = now();
  const cpu = process.cpuUsage(cpu0);
  process.send({ jobs, failed, start, end, cpu_s: (cpu.user + cpu.system) / 1e6 });
}

// In the parent: run `processes` copies of `script` (argv + --child), wait for all, and print
// one JSON line: jobs added up, seconds from the first start to the last end, CPU added up.
async function runChildren(script, argv, processes, side, settings) {
  const results = await Promise.all(
    Array.from({ length: processes }, () =>
      new Promise((resolve, reject) => {
        const child = fork(script, [...argv, "--child", "1"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
        let figures = null;
        child.on("message", (m) => (figures = m));
        child.on("exit", (code) =>
          code === 0 && figures ? resolve(figures) : reject(new Error(`${side} worker exited with ${code}`)));
      })),
  );
  const jobs = results.reduce((a, r) => a + r.jobs, 0);
  const failed = results.reduce((a, r) => a + r.failed, 0);
  const seconds = (Math.max(...results.map((r) => r.end)) - Math.min(...results.map((r) => r.start))) / 1000;
  const cpu_s = results.reduce((a, r) => a + r.cpu_s, 0);
  console.log(JSON.stringify({ side, jobs, failed, seconds, jobs_per_s: jobs / seconds, cpu_s, settings }));
}

module.exports = { parseArgs, intArg, addresses, makeJob, reportChild, runChildren };
