// Graphile Worker's side of the PostgreSQL queue comparison (bench/pg_peers.py).
//   node graphile_drain.js enqueue --uri URI --jobs N
//       drops and remakes the graphile_worker schema, adds N jobs with addJobs (one statement
//       per 10,000), prints {"enqueued":N,"seconds":S}
//   node graphile_drain.js drain --uri URI [--url http://127.0.0.1:PORT/json/] [--processes 2]
//       [--concurrency 24] [--pool 25] [--local-queue 500] [--complete-delay 0]
//       runOnce in each process (it ends when no job is left), prints one JSON line.
// The defaults are the settings of Graphile Worker's own performance page
// (https://worker.graphile.org/docs/performance): concurrentJobs 24, maxPoolSize 25, localQueue
// size 500, completeJobBatchDelay 0 and failJobBatchDelay 0 (batched completion).
"use strict";
const { makeWorkerUtils, runOnce, Logger } = require("graphile-worker");
const { Client } = require("pg");
const { parseArgs, intArg, addresses, makeJob, reportChild, runChildren } = require("./common");

const args = parseArgs(process.argv.slice(2));
const uri = args.uri;
const quiet = new Logger(() => () => {});

async function enqueue(n) {
  const client = new Client({ connectionString: uri });
  await client.connect();
  await client.query("DROP SCHEMA IF EXISTS graphile_worker CASCADE");
  await client.end();
  const utils = await makeWorkerUtils({ connectionString: uri, logger: quiet });
  await utils.migrate();
  const start = Date.now();
  let batch = [];
  for (const ip of addresses(n)) {
    batch.push({ identifier: "lookup", payload: { ip } });
    if (batch.length === 10000) {
      await utils.addJobs(batch);
      batch = [];
    }
  }
  if (batch.length) await utils.addJobs(batch);
  const seconds = (Date.now() - start) / 1000;
  await utils.release();
  console.log(JSON.stringify({ enqueued: n, seconds }));
}

function settings() {
  return {
    concurrency: intArg(args, "concurrency", 24),
    pool: intArg(args, "pool", 25),
    localQueue: intArg(args, "local-queue", 500),
    completeDelay: intArg(args, "complete-delay", 0),
  };
}

async function drainChild() {
  const s = settings();
  const job = makeJob(args.url, s.concurrency);
  let jobs = 0, failed = 0;
  await runOnce({
    connectionString: uri,
    logger: quiet,
    noHandleSignals: true,
    preset: {
      worker: {
        concurrentJobs: s.concurrency,
        maxPoolSize: s.pool,
        localQueue: { size: s.localQueue },
        completeJobBatchDelay: s.completeDelay,
        failJobBatchDelay: s.completeDelay,
      },
    },
    taskList: {
      lookup: async (payload) => {
        try {
          await job(payload.ip);
          jobs++;
        } catch (e) {
          failed++;
          throw e;
        }
      },
    },
  });
  return { jobs, failed };
}

async function main() {
  const action = args._[0];
  if (action === "enqueue") return enqueue(intArg(args, "jobs", 100000));
  if (action !== "drain") throw new Error("usage: graphile_drain.js enqueue|drain --uri URI ...");
  if (args.child) return reportChild(drainChild);
  const s = settings();
  const processes = intArg(args, "processes", 2);
  await runChildren(__filename, process.argv.slice(2), processes, "graphile-worker",
    `${processes} processes x concurrentJobs ${s.concurrency}, maxPoolSize ${s.pool}, localQueue ${s.localQueue}, ` +
    `completeJobBatchDelay ${s.completeDelay}`);
}

main().catch((e) => {
  console.error(`graphile_drain: ${e.stack || e}`);
  process.exit(1);
});
