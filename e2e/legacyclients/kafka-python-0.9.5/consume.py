"""consume.py is kafka-python 0.9.5's SimpleConsumer as a legacy application used it: it reads K
records of one topic as group G, commits, and exits. SimpleConsumer.commit sends OffsetCommit v0,
which a ZooKeeper-mode broker stores in /consumers/G/offsets/T/P.

    python consume.py BOOTSTRAP TOPIC GROUP K
"""
import sys

import kafka
from kafka import KafkaClient, SimpleConsumer


def main():
    bootstrap, topic, group, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    client = KafkaClient(bootstrap)
    # auto_commit off: only the commit below may write, so the stored offset is the one after the
    # K records this run consumed.
    consumer = SimpleConsumer(client, group, topic, auto_commit=False)
    # A record that never comes ends the run with an error instead of a hang.
    msgs = consumer.get_messages(count=k, block=True, timeout=60)
    for m in msgs:
        print("consumed offset %d" % m.offset)
    if len(msgs) != k:
        sys.exit("kafka-python %s: got %d records, want %d" % (kafka.__version__, len(msgs), k))
    if not consumer.commit():
        sys.exit("kafka-python %s: commit failed" % kafka.__version__)
    print("kafka-python %s: committed after %d records" % (kafka.__version__, k))
    client.close()


if __name__ == "__main__":
    main()
