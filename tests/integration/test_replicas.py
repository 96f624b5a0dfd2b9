"""deploy/replicas.py's nginx config: sticky sessions by a cookie naming the replica that
answered, the websocket upgrade for /_stcore/stream, the replica in a response header; the
access-log reader the check uses; ``nginx -t`` on the config where nginx is installed."""

from __future__ import annotations

import importlib.util
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def replicas():
    spec = importlib.util.spec_from_file_location("deploy_replicas", ROOT / "deploy/replicas.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REPLICAS = ["127.0.0.1:8501", "127.0.0.1:8502", "10.0.0.7:8501"]


def _block(conf: str, head: str) -> str:
    """The body of the block that starts with ``head {``."""
    start = conf.index(head + " {") + len(head) + 2
    return conf[start:conf.index("}", start)]


def test_new_visitors_round_robin_and_returning_ones_stay(replicas):
    conf = replicas.nginx_config("127.0.0.1:8080", REPLICAS, upload_mb=50)
    everyone = _block(conf, "upstream dashboard")
    assert re.findall(r"server (\S+) max_fails", everyone) == REPLICAS
    assert "hash" not in everyone and "backup" not in everyone  # plain round robin
    for k, addr in enumerate(REPLICAS, 1):  # r<k>: that replica, the others only as backups
        pool = _block(conf, f"upstream dashboard_r{k}")
        assert re.findall(r"server (\S+);", pool) == [addr]
        assert re.findall(r"server (\S+) backup;", pool) == [a for a in REPLICAS if a != addr]
    chosen = _block(conf, "map $cookie_dashboard_replica $dashboard_pool")
    assert "default dashboard;" in chosen
    assert re.findall(r"(r\d) (dashboard_r\d);", chosen) == [
        ("r1", "dashboard_r1"), ("r2", "dashboard_r2"), ("r3", "dashboard_r3")]
    served = _block(conf, "map $upstream_addr $dashboard_served")
    # the last address tried names the cookie; 127.0.0.1:8501 is not a suffix match of
    # 10.0.0.7:8501 nor of a longer port
    patterns = dict((name, pat) for pat, name in re.findall(r'"~(.+)" (r\d);', served))
    assert re.search(patterns["r1"], "127.0.0.1:8502, 127.0.0.1:8501")
    assert not re.search(patterns["r1"], "127.0.0.1:8501, 127.0.0.1:8502")
    assert not re.search(patterns["r1"], "10.0.0.7:8501")
    assert re.search(patterns["r3"], "10.0.0.7:8501")
    location = _block(conf, "location /")
    assert "proxy_pass http://$dashboard_pool;" in location
    assert ('add_header Set-Cookie "dashboard_replica=$dashboard_served; Path=/; HttpOnly; '
            'SameSite=Lax" always;') in location
    assert "add_header X-Replica $upstream_addr always;" in location
    assert "listen 127.0.0.1:8080;" in conf
    assert "client_max_body_size 50m;" in conf
    assert "worker_processes 1;" in conf  # the round robin alternates exactly


def test_websocket_upgrade_and_forwarded_headers(replicas):
    conf = replicas.nginx_config("80", REPLICAS[:2])
    location = _block(conf, "location /")
    assert "proxy_http_version 1.1;" in location
    assert "proxy_set_header Upgrade $http_upgrade;" in location
    assert "proxy_set_header Connection $connection_upgrade;" in location
    assert 'map $http_upgrade $connection_upgrade { default upgrade; "" close; }' in conf
    timeout = re.search(r"proxy_read_timeout (\d+)d;", location)
    assert timeout and int(timeout.group(1)) >= 1  # an idle tab keeps its websocket
    assert "proxy_set_header Host $http_host;" in location  # Streamlit's origin check: host:port
    # overwritten, not appended: one address, the last one the app's "forwarded" mode reads
    assert "proxy_set_header X-Forwarded-For $remote_addr;" in location
    assert "dashboard_r3" not in conf


def test_access_log_rows_name_the_last_replica_tried(replicas, tmp_path):
    (tmp_path / "logs").mkdir()
    ua = replicas.UA
    lines = [
        f'127.0.0.1 [x] "GET / HTTP/1.1" 200 upstream=127.0.0.1:1 cookie=- "{ua.format("v0")}"',
        f'127.0.0.1 [x] "GET /_stcore/stream HTTP/1.1" 101 upstream=127.0.0.1:1, 127.0.0.1:2 '
        f'cookie=r1 "{ua.format("tour")}"',
        '127.0.0.1 [x] "GET / HTTP/1.1" 200 upstream=127.0.0.1:2 cookie=- "curl/8"',
        f'127.0.0.1 [x] "PUT /_stcore/upload_file/a/b HTTP/1.1" 204 upstream=127.0.0.1:2 '
        f'cookie=r2 "{ua.format("tour")}"',
    ]
    (tmp_path / "logs" / "access.log").write_text("\n".join(lines) + "\n")
    rows = replicas.access_log(tmp_path)
    assert [(r["tag"], r["method"], r["upstream"], r["status"]) for r in rows] == [
        ("v0", "GET", "127.0.0.1:1", "200"), ("tour", "GET", "127.0.0.1:2", "101"),
        ("tour", "PUT", "127.0.0.1:2", "204")]
    assert replicas.replicas_of(rows, "tour") == {"127.0.0.1:2"}
    start = len(lines[0]) + 1
    assert [r["tag"] for r in replicas.access_log(tmp_path, start)] == ["tour", "tour"]


def test_nginx_accepts_the_config(replicas, tmp_path, monkeypatch):
    nginx = replicas.find_nginx()
    if nginx is None:
        pytest.skip("nginx is not installed (apt-get install nginx)")
    args = replicas.write_config(nginx, tmp_path / "ok", "127.0.0.1:18080", REPLICAS[:2])
    assert args[:3] == [nginx, "-p", f"{tmp_path / 'ok'}/"]
    assert (tmp_path / "ok" / "temp" / "proxy").is_dir()  # nginx -t made its temp folders
    broken = replicas.nginx_config("127.0.0.1:18080", REPLICAS[:2]).replace(
        "proxy_http_version", "proxy_http_versio")
    monkeypatch.setattr(replicas, "nginx_config", lambda *a, **k: broken)
    with pytest.raises(replicas.Failed, match=r"nginx -t: .*proxy_http_versio"):
        replicas.write_config(nginx, tmp_path / "broken", "127.0.0.1:18080", REPLICAS[:2])


def test_config_command_prints_the_same_config(replicas):
    out = subprocess.run([sys.executable, str(ROOT / "deploy/replicas.py"), "config",
                          "--listen", "8080"], capture_output=True, text=True, check=True).stdout
    assert out == replicas.nginx_config("8080", ["127.0.0.1:8501", "127.0.0.1:8502"],
                                        replicas.deploy.upload_cap_mb())


def test_check_refuses_too_few_visitors():
    done = subprocess.run([sys.executable, str(ROOT / "deploy/replicas.py"), "check",
                           "--contexts", "1"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "--contexts must be at least 2" in done.stderr
    done = subprocess.run([sys.executable, str(ROOT / "deploy/replicas.py"), "config",
                           "--replica", "replica1:8501"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""  # the cookie map needs addresses
    assert "'replica1:8501' is not IP:PORT" in done.stderr


def test_readme_shows_the_generated_config(replicas):
    readme = (ROOT / "deploy" / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Several replicas behind a proxy"):]
    shown = section[section.index("```nginx\n") + 9:]
    shown = shown[:shown.index("```")]
    assert shown == replicas.nginx_config("80", ["127.0.0.1:8501", "127.0.0.1:8502"],
                                          replicas.deploy.upload_cap_mb())


def test_check_without_nginx_says_so_in_one_line(replicas, monkeypatch, capsys):
    monkeypatch.setattr(replicas, "find_nginx", lambda: None)
    before = signal.getsignal(signal.SIGTERM)
    try:
        assert replicas.main(["check"]) == 2
    finally:
        signal.signal(signal.SIGTERM, before)  # main() sets its own handler
    err = capsys.readouterr().err
    assert err == "replicas check skipped: nginx is absent (apt-get install nginx)\n"
