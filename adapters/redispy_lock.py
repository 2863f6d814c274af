#!/usr/bin/env python3
"""lockbench external-driver adapter for redis-py's redis.lock.Lock.

lockbench starts it (--driver 'exec:redis-py=/usr/bin/python3 adapters/redispy_lock.py'), gives
it the Redis to use in LOCKBENCH_* environment variables and speaks the protocol of
docs/external-drivers.md on its stdin and stdout: one line per request, "ID OP ARGS...", one per
reply, "ID STATUS [MESSAGE]", in any order. Requests run on a thread pool, so many are in flight;
the main thread reads requests and answers pings at once.

redis-py's Lock is SET NX PX with a random token and a Lua compare-and-delete release; it is not
reentrant, so the hello claims "mutex" only.
"""

import os
import platform
import queue
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import redis
from redis.exceptions import LockError, LockNotOwnedError

# How long one blocking acquire call waits before the adapter checks for a cancel, and the sleep
# between SET NX attempts: lockbench's naive driver retries every millisecond too.
SLICE_S = 0.05
RETRY_S = 0.001


def client():
    addrs = [a for a in os.environ.get("LOCKBENCH_REDIS_ADDRS", "").split(",") if a]
    if not addrs:
        sys.exit("redispy_lock: LOCKBENCH_REDIS_ADDRS is empty: run me from lockbench")
    topology = os.environ.get("LOCKBENCH_REDIS_TOPOLOGY", "single")
    kw = {
        "username": os.environ.get("LOCKBENCH_REDIS_USER") or None,
        "password": os.environ.get("LOCKBENCH_REDIS_PASSWORD") or None,
        # A Redis call that never returns would keep its request from a reply; lockbench gives up
        # on it after 30 s, this ends it first.
        "socket_timeout": 10,
        "socket_connect_timeout": 10,
    }
    kw.update(tls_kwargs())
    hostport = [(a.rsplit(":", 1)[0], int(a.rsplit(":", 1)[1])) for a in addrs]
    if topology == "single":
        host, port = hostport[0]
        return redis.Redis(host=host, port=port, db=int(os.environ.get("LOCKBENCH_REDIS_DB") or 0), **kw)
    if topology == "sentinel":
        from redis.sentinel import Sentinel

        # The sentinels speak TLS when the data nodes do, with credentials of their own.
        skw = tls_kwargs()
        if os.environ.get("LOCKBENCH_SENTINEL_USER"):
            skw["username"] = os.environ["LOCKBENCH_SENTINEL_USER"]
        if os.environ.get("LOCKBENCH_SENTINEL_PASSWORD"):
            skw["password"] = os.environ["LOCKBENCH_SENTINEL_PASSWORD"]
        s = Sentinel(hostport, sentinel_kwargs=skw, **kw)
        return s.master_for(os.environ.get("LOCKBENCH_REDIS_MASTER", "mymaster"))
    if topology == "cluster":
        from redis.cluster import ClusterNode, RedisCluster

        return RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in hostport], **kw)
    sys.exit("redispy_lock: topology %s: redis-py's Lock runs on one master (single, sentinel, cluster)" % topology)


def tls_kwargs():
    """redis-py's TLS arguments from lockbench's LOCKBENCH_REDIS_TLS* variables: verified against
    the CA given (else the system's roots), host name checked, a client certificate for mutual
    TLS."""
    if os.environ.get("LOCKBENCH_REDIS_TLS") != "1":
        return {}
    if os.environ.get("LOCKBENCH_REDIS_TLS_SERVER_NAME"):
        # redis-py 4 checks the certificate against the host it dials and cannot be given
        # another name; checking none instead would be weaker than what was asked for.
        sys.exit("redispy_lock: --tls-server-name is not supported by redis-py %s: dial the name"
                 " the certificate carries instead" % redis.__version__)
    kw = {"ssl": True, "ssl_cert_reqs": "required", "ssl_check_hostname": True}
    if os.environ.get("LOCKBENCH_REDIS_TLS_INSECURE") == "1":
        kw.update(ssl_cert_reqs="none", ssl_check_hostname=False)
    if os.environ.get("LOCKBENCH_REDIS_TLS_CA_FILE"):
        kw["ssl_ca_certs"] = os.environ["LOCKBENCH_REDIS_TLS_CA_FILE"]
    if os.environ.get("LOCKBENCH_REDIS_TLS_CERT_FILE"):
        kw["ssl_certfile"] = os.environ["LOCKBENCH_REDIS_TLS_CERT_FILE"]
        kw["ssl_keyfile"] = os.environ.get("LOCKBENCH_REDIS_TLS_KEY_FILE")
    return kw


class Adapter:
    def __init__(self, r, lease_ms, threads):
        self.r = r
        self.lease = lease_ms / 1000.0 if lease_ms > 0 else None  # None: redis-py's default, no expiry
        self.out = queue.Queue()
        self.pool = ThreadPoolExecutor(max_workers=threads)
        self.mu = threading.Lock()
        self.held = {}  # (owner, name) -> Lock
        self.cancels = {}  # request id -> Event

    def reply(self, rid, status, msg=""):
        line = rid + " " + status
        if msg:
            line += " " + msg.replace("\n", " ").replace("\r", " ")
        self.out.put(line + "\n")

    def write(self):
        while True:
            line = self.out.get()
            if line is None:
                break
            parts = [line]
            try:
                while True:
                    more = self.out.get_nowait()
                    if more is None:
                        sys.stdout.write("".join(parts))
                        sys.stdout.flush()
                        return
                    parts.append(more)
            except queue.Empty:
                pass
            sys.stdout.write("".join(parts))
            sys.stdout.flush()

    def acquire(self, rid, owner, name, wait_ms, cancel):
        try:
            lock = self.r.lock(name, timeout=self.lease, sleep=RETRY_S, thread_local=False)
            deadline = None if wait_ms < 0 else time.monotonic() + wait_ms / 1000.0
            while True:
                if cancel.is_set():
                    self.reply(rid, "timeout")
                    return
                left = SLICE_S if deadline is None else min(SLICE_S, max(deadline - time.monotonic(), 0))
                if lock.acquire(blocking=True, blocking_timeout=left):
                    with self.mu:
                        self.held[(owner, name)] = lock
                    self.reply(rid, "ok")
                    return
                if deadline is not None and time.monotonic() >= deadline:
                    self.reply(rid, "timeout")
                    return
        except Exception as e:  # the library or Redis failed: an error reply, the run goes on
            self.reply(rid, "error", "%s: %s" % (type(e).__name__, e))
        finally:
            with self.mu:
                self.cancels.pop(rid, None)

    def release(self, rid, owner, name):
        with self.mu:
            lock = self.held.pop((owner, name), None)
        if lock is None:
            self.reply(rid, "notowner", "%s does not hold %s" % (owner, name))
            return
        try:
            lock.release()
            self.reply(rid, "ok")
        except (LockNotOwnedError, LockError) as e:
            self.reply(rid, "notowner", str(e))
        except Exception as e:
            self.reply(rid, "error", "%s: %s" % (type(e).__name__, e))

    def serve(self, lines):
        for line in lines:
            f = line.rstrip("\n").split(" ")
            if len(f) == 2 and f[1] == "ping":
                self.reply(f[0], "ok")
            elif len(f) == 2 and f[1] == "cancel":
                with self.mu:
                    ev = self.cancels.get(f[0])
                if ev is not None:
                    ev.set()
            elif len(f) == 5 and f[1] == "acquire":
                ev = threading.Event()
                with self.mu:
                    self.cancels[f[0]] = ev
                self.pool.submit(self.acquire, f[0], f[2], f[3], int(f[4]), ev)
            elif len(f) == 4 and f[1] == "release":
                self.pool.submit(self.release, f[0], f[2], f[3])
            else:
                sys.exit("redispy_lock: not a request: %r" % line)
        # stdin closed: lockbench is done; stop the waits still going, then exit 0.
        with self.mu:
            for ev in self.cancels.values():
                ev.set()
        self.pool.shutdown(wait=True)


def main():
    r = client()
    r.ping()  # fail here, before the hello, with the reason on stderr
    concurrency = int(os.environ.get("LOCKBENCH_CONCURRENCY") or 1)
    a = Adapter(r, int(os.environ.get("LOCKBENCH_LEASE_MS") or 0), concurrency + 4)
    hello = '{"protocol":1,"library":"redis-py redis.lock.Lock","version":"%s","language":"python %s","kinds":["mutex"]}'
    sys.stdout.write("hello " + hello % (redis.__version__, platform.python_version()) + "\n")
    sys.stdout.flush()
    writer = threading.Thread(target=a.write, daemon=True)
    writer.start()
    a.serve(sys.stdin)
    a.out.put(None)
    writer.join()
    r.close()


if __name__ == "__main__":
    main()
