"""`numprobe serve` run by a test: started on a free loopback port, asked over HTTP, stopped by a
signal. A serve that hangs while loading, or ignores the signal, fails the test after a timeout
instead of hanging CI."""
import http.client
import os
import re
import selectors
import signal
import subprocess
import time

import pytest


class Served:
    def __init__(self, binary, args, timeout=60):
        self.proc = subprocess.Popen([binary, "serve", *map(str, args), "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.startup_output = self._until_url(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            pytest.fail("serve hung while loading")
        m = re.search(r"serving (http://([\d.]+):(\d+)/)", self.startup_output)
        if not m:
            _, err = self.proc.communicate(timeout=timeout)
            raise AssertionError("no URL printed: " + self.startup_output + err)
        self.url, self.host, self.port = m.group(1), m.group(2), int(m.group(3))

    def _until_url(self, timeout):
        # Raw reads of the pipe: no buffer can hide the line, and select bounds the wait.
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        text = ""
        end = time.monotonic() + timeout
        while not re.search(r"serving http://\S+/", text):
            left = end - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise subprocess.TimeoutExpired("serve", timeout)
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                break
            text += chunk.decode("utf-8", "replace")
        return text

    def get(self, target, host=None):
        """(status, body) of GET target; `host` overrides the Host header."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        conn.putrequest("GET", target, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host or f"{self.host}:{self.port}")
        conn.endheaders()
        r = conn.getresponse()
        body = r.read()
        conn.close()
        return r.status, body

    def stop(self, sig=signal.SIGINT, timeout=60):
        """(exit code, all of stdout, stderr) once the signal has stopped it."""
        self.proc.send_signal(sig)
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            pytest.fail(f"serve ignored signal {sig}")
        return self.proc.returncode, self.startup_output + out, err
