// connection.js: how the page follows the room. A WebSocket carries the
// room's frames while one can be opened; while it is down the page polls
// the ticket's status instead and tries the socket again with a growing
// delay.

const SILENT_SOCKET_MS = 20000;
const SILENT_CHECK_MS = 5000;

// connection follows the room for the page. o says what it needs:
//   wanted()    whether the page should follow the room at all now
//   url()       the socket's address
//   onOpen()    the socket opened (polling has stopped)
//   onFrame(f)  a decoded frame arrived
//   poll()      asks for the status once; answers a promise
//   pollSeconds() the delay between polls
// It answers {connect, stop, isOpen, hasSocket}.
export function connection(o) {
  let socket = null;
  let open = false;
  let attempts = 0;
  let retryTimer = 0;
  let lastFrameAt = 0;
  let polling = false;
  let pollTimer = 0;

  // The room pushes a frame at least every few seconds; an open socket that
  // stays silent (a proxy swallowing frames, a half-dead connection) is
  // dropped so that polling takes over.
  setInterval(() => {
    if (open && Date.now() - lastFrameAt > SILENT_SOCKET_MS && socket) socket.close();
  }, SILENT_CHECK_MS);

  function connect() {
    if (socket || !o.wanted()) return;
    clearTimeout(retryTimer);
    try {
      socket = new WebSocket(o.url());
    } catch (e) {
      socket = null;
      down();
      return;
    }
    const s = socket;
    s.onopen = () => {
      if (s !== socket) return;
      open = true;
      lastFrameAt = Date.now();
      attempts = 0;
      stopPolling();
      o.onOpen();
    };
    s.onmessage = (e) => {
      if (s !== socket) return;
      lastFrameAt = Date.now();
      let f;
      try {
        f = JSON.parse(e.data);
      } catch (x) {
        return;
      }
      o.onFrame(f);
    };
    s.onclose = () => {
      if (s !== socket) return;
      socket = null;
      open = false;
      down();
    };
  }

  // down falls back to polling and tries the socket again later.
  function down() {
    if (!o.wanted()) return;
    startPolling();
    const delay = Math.min(30000, 1000 * Math.pow(2, attempts)) * (0.8 + Math.random() * 0.4);
    attempts = Math.min(attempts + 1, 5);
    clearTimeout(retryTimer);
    retryTimer = setTimeout(connect, delay);
  }

  function closeSocket() {
    clearTimeout(retryTimer);
    if (socket) {
      const s = socket;
      socket = null;
      open = false;
      s.close();
    }
  }

  function startPolling() {
    if (polling) return;
    polling = true;
    schedulePoll();
  }

  function stopPolling() {
    polling = false;
    clearTimeout(pollTimer);
  }

  function schedulePoll() {
    clearTimeout(pollTimer);
    pollTimer = setTimeout(() => {
      if (!polling) return;
      o.poll().then(() => {
        if (polling) schedulePoll();
      });
    }, o.pollSeconds() * 1000);
  }

  // stop closes the socket and stops polling, until the next connect.
  function stop() {
    closeSocket();
    stopPolling();
  }

  return { connect, stop, isOpen: () => open, hasSocket: () => socket !== null };
}
