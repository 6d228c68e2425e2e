// Not part of the example run: the paths on which a test process ends,
// each run alone by the repository's package test
// (tests/tests/ecosystem_packages.rs), which then checks by its process id
// that the cluster did not outlive it. KAFKA_WIRE_LIFETIME is `fails` (the
// test fails) or `waits` (it waits to be interrupted or killed); the
// cluster's process id goes to KAFKA_WIRE_PID_FILE.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { startFakeCluster } from 'kafka-wire';

test(`a test that ${process.env.KAFKA_WIRE_LIFETIME}`, async (t) => {
  const cluster = await startFakeCluster({ brokers: 1 });
  t.after(() => cluster.stop());
  const file = process.env.KAFKA_WIRE_PID_FILE;
  writeFileSync(`${file}.tmp`, String(cluster.pid));
  renameSync(`${file}.tmp`, file);
  if (process.env.KAFKA_WIRE_LIFETIME === 'waits') {
    await new Promise((resolve) => setTimeout(resolve, 120000));
  }
  assert.fail('this test fails on purpose');
});
