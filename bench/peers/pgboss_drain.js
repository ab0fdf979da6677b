// pg-boss's side of the PostgreSQL queue comparison (bench/pg_peers.py).
//   node pgboss_drain.js enqueue --uri URI --jobs N
//       drops and remakes the pgboss schema, creates the queue, inserts N jobs with insert()
//       (one statement per 10,000), prints {"enqueued":N,"seconds":S}
//   node pgboss_drain.js drain --uri URI [--url http://127.0.0.1:PORT/json/] [--processes 2]
//       [--loops 2] [--batch 1000] [--sockets 500]
//       prints one JSON line.
// Each process runs `--loops` copies of the loop work() runs (fetch a batch of `--batch` jobs,
// run them all at once, complete them in one call, without waiting for the completion before
// the next fetch) but without work()'s polling sleep (at least pollingIntervalSeconds, 0.5 s at
// the least, between fetches that came back quickly), which only slows a drain down; a loop ends
// when a fetch comes back empty. Few loops with big batches: on this 2-core machine 8 loops of 100
// drained at half the rate of 2 loops of 1,000, the server's CPU going to the concurrent SKIP
// LOCKED fetches stepping over each other's rows. HTTP jobs share --sockets kept-alive connections
// per process (dibs: up to 1,000 in all). Maintenance and scheduling are off in the drain (supervise,
// schedule: false) so that no background query runs during the measure.
"use strict";
const PgBoss = require("pg-boss");
const { parseArgs, intArg, addresses, makeJob, reportChild, runChildren } = require("./common");

const args = parseArgs(process.argv.slice(2));
const uri = args.uri;
const queue = "lookup";

function boss(poolSize, migrate) {
  const b = new PgBoss({ connectionString: uri, max: poolSize, supervise: false, schedule: false, migrate });
  b.on("error", (e) => console.error(`pg-boss: ${e.message}`));
  return b;
}

async function enqueue(n) {
  const b = boss(4, true);
  await b.start();
  await b.getDb().executeSql("DROP SCHEMA IF EXISTS pgboss CASCADE", []);
  await b.stop({ graceful: false, wait: true });
  const fresh = boss(4, true);
  await fresh.start();
  await fresh.createQueue(queue);
  const start = Date.now();
  let batch = [];
  for (const ip of addresses(n)) {
    batch.push({ name: queue, data: { ip } });
    if (batch.length === 10000) {
      await fresh.insert(batch);
      batch = [];
    }
  }
  if (batch.length) await fresh.insert(batch);
  const seconds = (Date.now() - start) / 1000;
  await fresh.stop({ graceful: false, wait: true });
  console.log(JSON.stringify({ enqueued: n, seconds }));
}

function settings() {
  return { loops: intArg(args, "loops", 2), batch: intArg(args, "batch", 1000), sockets: intArg(args, "sockets", 500) };
}

async function drainChild() {
  const s = settings();
  const b = boss(s.loops + 2, false);
  await b.start();
  const job = makeJob(args.url, s.sockets);
  let jobs = 0, failed = 0;
  const writes = [];
  const loop = async () => {
    for (;;) {
      const batch = await b.fetch(queue, { batchSize: s.batch });
      if (!batch || batch.length === 0) return;
      const results = await Promise.allSettled(batch.map((j) => job(j.data.ip)));
      const done = batch.filter((_, i) => results[i].status === "fulfilled").map((j) => j.id);
      const bad = batch.filter((_, i) => results[i].status !== "fulfilled").map((j) => j.id);
      jobs += done.length;
      failed += bad.length;
      if (done.length) writes.push(b.complete(queue, done));
      if (bad.length) writes.push(b.fail(queue, bad));
    }
  };
  await Promise.all(Array.from({ length: s.loops }, loop));
  await Promise.all(writes);
  await b.stop({ graceful: false, wait: true });
  return { jobs, failed };
}

async function main() {
  const action = args._[0];
  if (action === "enqueue") return enqueue(intArg(args, "jobs", 100000));
  if (action !== "drain") throw new Error("usage: pgboss_drain.js enqueue|drain --uri URI ...");
  if (args.child) return reportChild(drainChild);
  const s = settings();
  const processes = intArg(args, "processes", 2);
  await runChildren(__filename, process.argv.slice(2), processes, "pg-boss",
    `${processes} processes x ${s.loops} fetch loops, batchSize ${s.batch}, complete() per batch` +
    (args.url ? `, ${s.sockets} sockets` : ""));
}

main().catch((e) => {
  console.error(`pgboss_drain: ${e.stack || e}`);
  process.exit(1);
});
