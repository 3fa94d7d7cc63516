// Keyframe: the worker of camera-motion.js. It turns camera frames into small grey copies (about 160
// pixels wide) and sends them to this server's /camera-motion websocket (same origin only; the page's
// policy allows no other). Off the page's thread, so Flutter's drawing never makes it miss a frame.
// Wire format: app/frames/motion_stream.py. Frames come as a stream of VideoFrames
// (MediaStreamTrackProcessor: every frame, with its capture time) or, in browsers without it, as
// ImageBitmaps the page posts.
"use strict";
const MAX_WIDTH = 192;
// A server that stalls (a busy machine) gets the frames late, with their capture times, rather than a
// gap that would read as stillness; past ~3 s of them it loses frames instead of growing a backlog.
const MAX_BUFFERED = 3 * 1024 * 1024;
let socket = null;
let pixels = null; // a VideoFrame's planes, reused
let canvas = null; // for bitmaps and frames in a format without a grey plane

function open() {
  return socket && socket.readyState === WebSocket.OPEN && socket.bufferedAmount <= MAX_BUFFERED;
}

// A grey picture `k` times smaller than the w x h one in `src` (a byte per `step`, rows `stride` apart,
// luma from `weights` per channel), each output pixel the mean of its k x k block: the message.
function shrink(src, offset, stride, w, h, step, weights, seconds) {
  const k = Math.max(1, Math.ceil(w / MAX_WIDTH));
  const ow = Math.floor(w / k), oh = Math.floor(h / k);
  const message = new ArrayBuffer(12 + ow * oh);
  const header = new DataView(message);
  header.setFloat64(0, seconds, true);
  header.setUint16(8, ow, true);
  header.setUint16(10, oh, true);
  const out = new Uint8Array(message, 12);
  const [wr, wg, wb] = weights;
  const n = k * k * 256;
  for (let y = 0; y < oh; y++) {
    for (let x = 0; x < ow; x++) {
      let sum = 0;
      for (let dy = 0; dy < k; dy++) {
        let i = offset + (y * k + dy) * stride + x * k * step;
        for (let dx = 0; dx < k; dx++, i += step) {
          sum += step === 1 ? src[i] * 256 : src[i] * wr + src[i + 1] * wg + src[i + 2] * wb;
        }
      }
      out[y * ow + x] = sum / n;
    }
  }
  socket.send(message);
}

const RGB = [77, 150, 29]; // BT.601 luma, /256
const BGR = [29, 150, 77];

function drawn(source, w, h, seconds) {
  if (!canvas) canvas = new OffscreenCanvas(w, h);
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  ctx.drawImage(source, 0, 0, w, h);
  shrink(ctx.getImageData(0, 0, w, h).data, 0, 4 * w, w, h, 4, RGB, seconds);
}

async function sendFrame(frame) {
  const seconds = frame.timestamp / 1e6; // microseconds of capture
  const { width, height } = frame.visibleRect;
  const format = frame.format || "";
  if (!/^(I4|NV12|RGB|BGR)/.test(format)) {
    const k = Math.max(1, Math.ceil(width / MAX_WIDTH));
    drawn(frame, Math.floor(width / k), Math.floor(height / k), seconds);
    return;
  }
  const size = frame.allocationSize();
  if (!pixels || pixels.byteLength < size) pixels = new Uint8Array(size);
  // Copying the planes is a memcpy; drawing a frame on a canvas costs ~50 ms without a GPU.
  const [first] = await frame.copyTo(pixels);
  if (!open()) return;
  const yuv = format.startsWith("I4") || format.startsWith("NV12"); // the first plane is the grey one
  shrink(pixels, first.offset, first.stride, width, height, yuv ? 1 : 4, format.startsWith("BGR") ? BGR : RGB, seconds);
}

async function follow(readable) {
  const reader = readable.getReader();
  for (;;) {
    const { value: frame, done } = await reader.read();
    if (done) return;
    try {
      if (open()) await sendFrame(frame);
    } finally {
      frame.close();
    }
  }
}

onmessage = ({ data }) => {
  if (data.url) {
    socket = new WebSocket(data.url);
    socket.binaryType = "arraybuffer";
    socket.onopen = () => socket.send(JSON.stringify({ page: data.page }));
    socket.onclose = () => postMessage("closed");
    if (data.readable) follow(data.readable).catch(() => postMessage("closed"));
  } else if (data.bitmap) {
    if (open()) drawn(data.bitmap, data.bitmap.width, data.bitmap.height, data.seconds);
    data.bitmap.close();
  }
};
