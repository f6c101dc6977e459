// consume.js is kafka-node's ZooKeeper-based HighLevelConsumer as a legacy application used it:
// it reads K records of one topic as group G, commits, and exits. The kafka-node version is the
// one NODE_PATH points at (scripts/legacy-clients installs each pinned version in its own folder).
// HighLevelConsumer registers itself under /consumers/G in ZooKeeper and commits with
// OffsetCommit v0, which a ZooKeeper-mode broker stores in /consumers/G/offsets/T/P.
//
//   NODE_PATH=.../node_modules node consume.js ZK_CONNECT_WITH_CHROOT TOPIC GROUP K
'use strict';
const kafka = require('kafka-node');

const [zk, topic, group, kArg] = process.argv.slice(2);
const k = Number(kArg);
const version = require('kafka-node/package.json').version;

function fail (msg) {
  console.error(`kafka-node ${version}: ${msg}`);
  process.exit(1);
}

// A record that never comes ends the run with an error instead of a hang.
const guard = setTimeout(() => fail(`fewer than ${k} records within 60s`), 60000);

const client = new kafka.Client(zk, 'zk2kafka-legacy-test');
// autoCommit off: only the commit in close(true) below may write, so the stored offset is the
// one after the K records this run consumed.
const consumer = new kafka.HighLevelConsumer(client, [{ topic }], { groupId: group, autoCommit: false });

// Offsets seen: the consumer may deliver a record again (a fetch sent before the previous one's
// offsets were applied, seen with 2.6.1), which a legacy application had to bear too; it is the
// offset it commits that this run measures, once every record has been seen.
const seen = new Set();
let closing = false;
consumer.on('message', m => {
  console.log(`consumed partition ${m.partition} offset ${m.offset}${seen.has(m.offset) ? ' (again)' : ''}`);
  if (m.offset >= k) fail(`got offset ${m.offset}: the log holds only ${k} records`);
  seen.add(m.offset);
});
// 'done' ends each fetch; the consumer has updated its own offsets for the batch by then.
consumer.on('done', () => {
  if (seen.size < k || closing) return;
  closing = true;
  // close(true) commits the consumer's offsets, then closes the client (and its ZooKeeper session).
  consumer.close(true, err => {
    if (err) fail(`commit/close: ${err}`);
    clearTimeout(guard);
    console.log(`kafka-node ${version}: committed after seeing all ${k} records`);
    process.exit(0);
  });
});
consumer.on('error', err => fail(`consumer error: ${err}`));
