// Keyframe: no blank page between the loading screen and the app.
//
// flutter_bootstrap.js removes #loading at Flutter's first frame, but that frame is
// empty (transparent): Flet's page arrives from the server about half a second later.
// Meanwhile a copy of the loading screen waits behind Flutter's view, and the app's
// page paints over it. The copy is removed after 10 s, only to stop its spinner (by
// then it is covered). Loaded by index.html before flutter_bootstrap.js.
window.addEventListener(
  "flutter-first-frame",
  () => {
    const loading = document.getElementById("loading");
    if (!loading) {
      return;
    }
    const behind = loading.cloneNode(true);
    behind.id = "loading-behind";
    behind.removeAttribute("role");
    behind.removeAttribute("aria-live");
    behind.removeAttribute("aria-label");
    behind.setAttribute("aria-hidden", "true");
    behind.style.zIndex = "-1";
    document.body.prepend(behind);
    setTimeout(() => behind.remove(), 10000);
  },
  { once: true },
);
