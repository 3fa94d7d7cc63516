// Keyframe: the page loads scripts from this server only.
//
// Flet 1.0.5's web client inserts <script src="https://cdn.jsdelivr.net/npm/@rive-app/
// flutter-native-wasm@44.0.0/wasm/rive_native.js"> on every load (for the Rive
// animation plugin, which Keyframe does not use; the URL is compiled into
// main.dart.js / main.dart.wasm). The page's Content-Security-Policy would refuse it
// anyway; this points such a script at a path of this server instead (an empty script),
// so the browser never even attempts another host. Rive then stays unloaded, exactly
// as when offline. Loaded before Flutter by index.html; see app/ui/web_shell.py.
(() => {
  const local = (value) => {
    let url;
    try {
      url = new URL(String(value), document.baseURI);
    } catch (e) {
      return value;
    }
    if (url.origin === window.location.origin || url.protocol === "blob:" || url.protocol === "data:") {
      return value;
    }
    const kept = new URL("_not_fetched/" + url.host + url.pathname, document.baseURI).toString();
    console.info("Keyframe: not fetching " + url.href + " (the page talks only to this device)");
    return kept;
  };
  const src = Object.getOwnPropertyDescriptor(HTMLScriptElement.prototype, "src");
  Object.defineProperty(HTMLScriptElement.prototype, "src", {
    configurable: true,
    enumerable: src.enumerable,
    get() {
      return src.get.call(this);
    },
    set(value) {
      src.set.call(this, local(value));
    },
  });
  const setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    if (this instanceof HTMLScriptElement && String(name).toLowerCase() === "src") {
      value = local(value);
    }
    return setAttribute.call(this, name, value);
  };
})();
