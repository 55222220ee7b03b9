/**
 * Preload (`--import`) for the example agents and mock servers the compare
 * bench starts: every TCP listen binds 127.0.0.1 only, and a port listed in
 * ADCP_BENCH_PORT_MAP (JSON `{ "3456": 51234 }`) is replaced, for examples that
 * hard-code their port. Nothing else changes.
 */
import net from 'node:net';

const map = JSON.parse(process.env.ADCP_BENCH_PORT_MAP || '{}');
const remap = (port) => (port != null && map[String(port)] != null ? Number(map[String(port)]) : port);
const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function (...args) {
  const [first] = args;
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, cb])
    const rest = args.slice(1);
    if (typeof rest[0] === 'string') rest.shift();
    return listen.call(this, remap(Number(first)), '127.0.0.1', ...rest);
  }
  if (
    first &&
    typeof first === 'object' &&
    !(first instanceof net.Server) &&
    ('port' in first || !('path' in first || 'fd' in first || '_handle' in first))
  ) {
    return listen.call(this, { ...first, port: remap(first.port ?? 0), host: '127.0.0.1' }, ...args.slice(1));
  }
  if (first === undefined || typeof first === 'function') return listen.call(this, 0, '127.0.0.1', ...args);
  return listen.apply(this, args);
};
