"""Where a model's files can be fetched from, and the user's own mirror setting.

Any mirror may serve anything: the manifest's SHA-256 decides what is kept.
A user-set mirror (a company or local copy laid out as `<base>/<path>`)
replaces the public mirrors instead of being tried before them, so someone who
points Keyframe at an internal server never has a failed file fall back to
the internet behind their back.

A download is redirected only within its mirror's hosts: the mirror's own host
plus the `redirect_hosts` its manifest entry pins (Hugging Face sends file
bodies to its CDN and Xet hosts). A user's mirror has only its own host.
"""

from __future__ import annotations

import dataclasses
import re
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from urllib.parse import quote, urlsplit

from app.models.manifest import Manifest, ManifestError, check_redirect_hosts
from app.storage.locations import data_dir
from app.storage.safefs import write_json_atomic
from app.storage.small_file import BadJSON, read_small_json

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
SETTINGS_FILE = "model-mirror.json"
MAX_SETTINGS_BYTES = 64 * 1024  # a URL and a switch


class MirrorError(ValueError):
    pass


class MirrorKind(StrEnum):
    HUGGINGFACE = "huggingface"
    MODELSCOPE = "modelscope"
    BASE = "base"  # a company or local copy laid out as <URL>/<file path>


@dataclass(frozen=True)
class Mirror:
    name: str
    kind: MirrorKind
    base: str  # site or base URL
    repo: str = ""
    revision: str = ""
    redirect_hosts: tuple[str, ...] = ()  # pinned by the manifest; a user's mirror has none

    def url_for(self, path: str) -> str:
        if self.kind is MirrorKind.HUGGINGFACE:
            return f"{self.base}/{self.repo}/resolve/{self.revision}/{quote(path, safe='/')}"
        if self.kind is MirrorKind.MODELSCOPE:
            return (
                f"{self.base}/api/v1/models/{self.repo}/repo"
                f"?Revision={quote(self.revision, safe='')}&FilePath={quote(path, safe='')}"
            )
        return f"{self.base}/{quote(path, safe='/')}"

    @property
    def host(self) -> str:
        return (urlsplit(self.base).hostname or "").lower()

    @property
    def hosts(self) -> frozenset[str]:
        """Every host a download from this mirror may reach, redirects included."""
        return frozenset(h for h in (self.host, *self.redirect_hosts) if h)


def base_mirror(url: str, name: str = "user mirror") -> Mirror:
    shown = _without_credentials(url)  # an error names the URL: never with a password in it
    try:
        parts = urlsplit(url.strip())
        hostname, _port = parts.hostname, parts.port  # reading each checks it: ValueError when malformed
    except ValueError as exc:  # "http://[::1": an unclosed IPv6 address; "http://h:x": no port number
        why = f" ({exc})" if shown == url else ""  # the reason may quote the netloc: "u:pass/word@h" has port "pass"
        raise MirrorError(f"mirror URL is not a valid URL{why}, got {shown!r}") from None
    if parts.username is not None:
        # The URL is saved in model-mirror.json and shown in messages: a password there is in clear text.
        raise MirrorError(
            f"mirror URL must not contain a user name or password (Keyframe would keep them in clear text), "
            f"got {shown!r}"
        )
    if parts.scheme not in ("http", "https") or not hostname:
        raise MirrorError(f"mirror URL must be http:// or https:// with a host, got {shown!r}")
    if parts.query or parts.fragment:
        raise MirrorError(f"mirror URL must be a plain base URL (files are fetched as <base>/<path>), got {shown!r}")
    return Mirror(name=name, kind=MirrorKind.BASE, base=url.strip().rstrip("/"))


def _without_credentials(url: str) -> str:
    """`url` with anything before its last '@' masked ("http://***@host/m"): that may be a password,
    even in a URL too malformed to parse."""
    head, at, host_and_path = url.rpartition("@")
    if not at:
        return url
    scheme = head.partition("://")[0] + "://" if "://" in head else ""
    return f"{scheme}***@{host_and_path}"


def manifest_mirrors(manifest: Manifest) -> list[Mirror]:
    """The public mirrors a manifest lists, in its order; unknown kinds are skipped."""
    mirrors: list[Mirror] = []
    for entry in manifest.mirrors:
        kind = entry.get("kind")
        name = str(entry.get("name") or kind)
        repo = entry.get("repo") or manifest.repo
        try:
            redirect_hosts = check_redirect_hosts(entry)
        except ManifestError as exc:
            raise MirrorError(f"{manifest.id}: mirror {name}: {exc}") from exc
        if kind == "huggingface" and isinstance(repo, str):
            revision = entry.get("revision") or manifest.revision
            # Only a full commit pins the bytes; a branch name could move under us.
            if not isinstance(revision, str) or not _COMMIT.match(revision):
                raise MirrorError(f"{manifest.id}: Hugging Face mirror needs a 40-hex commit, got {revision!r}")
            mirrors.append(
                Mirror(name, MirrorKind.HUGGINGFACE, "https://huggingface.co", repo, revision, redirect_hosts)
            )
        elif kind == "modelscope" and isinstance(repo, str):
            # ModelScope revisions differ from Hugging Face commits; the hashes cross-check them.
            revision = entry.get("revision") or "master"
            mirrors.append(
                Mirror(name, MirrorKind.MODELSCOPE, "https://modelscope.cn", repo, str(revision), redirect_hosts)
            )
        elif kind == "base" and isinstance(entry.get("url"), str):
            mirrors.append(dataclasses.replace(base_mirror(entry["url"], name), redirect_hosts=redirect_hosts))
    return mirrors


def choose_mirrors(manifest: Manifest, user_urls: Sequence[str] = ()) -> list[Mirror]:
    """User mirrors when given (in order), else the manifest's own."""
    if user_urls:
        return [
            base_mirror(url, f"mirror {i + 1}" if len(user_urls) > 1 else "user mirror")
            for i, url in enumerate(user_urls)
        ]
    return manifest_mirrors(manifest)


def _settings_path(env: Mapping[str, str] | None) -> Path:
    return data_dir(env) / SETTINGS_FILE


@dataclass(frozen=True)
class DownloadSettings:
    """What the user saved for downloads: their mirror (None: the manifests' mirrors) and
    whether downloads go through the system's proxy (off by default: a direct connection)."""

    mirror: str | None = None
    use_system_proxy: bool = False


def load_download_settings(env: Mapping[str, str] | None = None) -> DownloadSettings:
    """The saved download settings; defaults when none were saved.

    A settings file that exists but cannot be read or understood raises
    MirrorError: treating it as "no mirror" would send a download that the user
    meant for their own server to the public mirrors without a word.
    """
    path = _settings_path(env)
    try:
        data = read_small_json(path, MAX_SETTINGS_BYTES)
    except FileNotFoundError:
        return DownloadSettings()
    except OSError as exc:
        reason = exc.strerror or exc
        raise MirrorError(f"cannot read the saved mirror setting {path} ({reason}); fix or clear it") from exc
    except BadJSON as exc:
        raise MirrorError(f"the saved mirror setting {path} is {exc}; fix or clear it") from exc
    if not isinstance(data, dict):
        raise MirrorError(f"the saved mirror setting {path} is not a JSON object; fix or clear it")
    proxy = data.get("use_system_proxy", False)
    if not isinstance(proxy, bool):
        raise MirrorError(f"the saved mirror setting {path}: use_system_proxy must be true or false; fix or clear it")
    url = data.get("mirror_base_url")
    if url is None and "use_system_proxy" in data:
        return DownloadSettings(None, proxy)  # only the proxy choice was saved
    if not isinstance(url, str) or not url:
        raise MirrorError(f"the saved mirror setting {path} has no mirror_base_url string; fix or clear it")
    try:
        base_mirror(url)  # an invalid URL is an error too, not "no mirror"
    except MirrorError as exc:
        raise MirrorError(f"the saved mirror setting {path} is invalid: {exc}; fix or clear it") from exc
    return DownloadSettings(url, proxy)


def load_mirror_setting(env: Mapping[str, str] | None = None) -> str | None:
    """The mirror base URL the user saved, or None when no mirror was saved (MirrorError: see above)."""
    return load_download_settings(env).mirror


def save_download_settings(settings: DownloadSettings, env: Mapping[str, str] | None = None) -> None:
    """Saves both choices (the mirror URL is validated first); the defaults remove the file."""
    path = _settings_path(env)
    if settings.mirror is not None:
        base_mirror(settings.mirror)
    if settings == DownloadSettings():
        path.unlink(missing_ok=True)
        return
    data: dict[str, object] = {"use_system_proxy": settings.use_system_proxy}
    if settings.mirror is not None:
        data["mirror_base_url"] = settings.mirror.strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, data)


def _saved_proxy_choice(env: Mapping[str, str] | None) -> bool:
    try:
        return load_download_settings(env).use_system_proxy
    except MirrorError:
        return False  # a broken file is being replaced: that is how it is fixed


def save_mirror_setting(url: str | None, env: Mapping[str, str] | None = None) -> None:
    """Saves (or with None, clears) the user's mirror; the URL is validated first; the proxy choice is kept."""
    if url is not None:
        base_mirror(url)
    save_download_settings(DownloadSettings(url, _saved_proxy_choice(env)), env)


def save_proxy_setting(use_system_proxy: bool, env: Mapping[str, str] | None = None) -> None:
    """Saves the proxy choice, keeping the saved mirror (MirrorError when the saved file is broken)."""
    current = load_download_settings(env)
    save_download_settings(DownloadSettings(current.mirror, use_system_proxy), env)


def system_proxies(mirrors: Sequence[Mirror]) -> dict[str, str]:
    """The system's proxy per URL scheme ({"https": "http://proxy:3128"}) for a download from `mirrors`.

    From the environment (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY) or the OS settings on macOS and
    Windows, as urllib reads them. Empty when there is none, or when every mirror host is
    exempt (NO_PROXY or the OS bypass list). Only http:// proxies (which tunnel https with
    CONNECT) are used; any other kind is an error rather than a silent direct connection.
    """
    found = urllib.request.getproxies()
    proxies: dict[str, str] = {}
    for scheme in ("http", "https"):
        url = found.get(scheme) or found.get("all")
        if not url:
            continue
        if "://" not in url:
            url = f"http://{url}"
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise MirrorError(f"the system's {scheme} proxy {url!r} is not an http:// proxy; Keyframe cannot use it")
        proxies[scheme] = url
    hosts = [m.host for m in mirrors if m.host]
    if proxies and hosts and all(urllib.request.proxy_bypass(h) for h in hosts):
        return {}
    return proxies
