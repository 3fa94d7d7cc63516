// Keyframe: the live camera's movement at the camera's own rate, for the compression rhythm.
//
// flet-camera's preview (a <video> of the camera's stream) is already on the page. Every frame of it
// goes to camera-motion-worker.js, which sends a small grey copy to this server only
// (ws://<this host>/camera-motion, same origin; the page's policy allows no other). Chromium gives
// every frame with its capture time (MediaStreamTrackProcessor on a clone of the camera's track);
// elsewhere the page posts one bitmap per presented frame (requestVideoFrameCallback). Keyframes for
// the model still come from take_picture at full quality. Nothing runs while no camera preview is live.
(() => {
  "use strict";
  const LOOK_EVERY_MS = 400; // for a camera preview appearing or going
  let video = null;
  let worker = null;
  let clone = null; // our copy of the camera's track: stopped with the camera, so its light goes off
  let named = null; // the page id the worker's connection gave

  function liveVideo(root) {
    for (const v of root.querySelectorAll("video")) {
      const track = v.srcObject instanceof MediaStream ? v.srcObject.getVideoTracks()[0] : null;
      if (track && track.readyState === "live" && v.readyState >= 2) return v;
    }
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) {
        const v = liveVideo(el.shadowRoot);
        if (v) return v;
      }
    }
    return null;
  }

  function stop() {
    if (worker) worker.terminate();
    if (clone) clone.stop();
    worker = clone = null;
  }

  function start(v) {
    const page = sessionStorage.getItem("_flet_session_id"); // Flet's id of this tab's page
    if (!page) return;
    named = page;
    worker = new Worker("camera-motion-worker.js");
    worker.onmessage = () => stop(); // its connection closed: started again at the next look
    const url = location.origin.replace(/^http/, "ws") + "/camera-motion";
    if (typeof MediaStreamTrackProcessor === "function") {
      clone = v.srcObject.getVideoTracks()[0].clone();
      const readable = new MediaStreamTrackProcessor({ track: clone }).readable;
      worker.postMessage({ url, page, readable }, [readable]);
      return;
    }
    worker.postMessage({ url, page });
    if (!("requestVideoFrameCallback" in v)) return; // an old browser: the rhythm says its frames are too few
    const mine = worker;
    const onFrame = async (now) => {
      if (worker !== mine || video !== v) return;
      v.requestVideoFrameCallback(onFrame);
      const bitmap = await createImageBitmap(v, { resizeWidth: 192 });
      mine.postMessage({ bitmap, seconds: now / 1000 }, [bitmap]);
    };
    v.requestVideoFrameCallback(onFrame);
  }

  setInterval(() => {
    const v = liveVideo(document);
    // A new camera, its track ended, or Flet gave this tab a new page (a reconnect): start again.
    const renamed = worker && sessionStorage.getItem("_flet_session_id") !== named;
    if (v !== video || (clone && clone.readyState !== "live") || renamed) {
      stop();
      video = v;
    }
    if (video && !worker) start(video);
  }, LOOK_EVERY_MS);
})();
