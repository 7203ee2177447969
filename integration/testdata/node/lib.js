// Shared plumbing of the test apps: JSON-line logging on stdout (the Go test reads
// it) and the listen address: the port the test chose, or with PORT=0 one the kernel
// picks, which the ready line reports.
'use strict';

const log = (event, fields = {}) => {
  process.stdout.write(JSON.stringify({event, ...fields}) + '\n');
};

const listenPort = () => {
  const port = Number(process.env.PORT);
  if (process.env.PORT === undefined || !Number.isInteger(port) || port < 0) {
    process.stderr.write('PORT must be set to the port to listen on (0: any)\n');
    process.exit(2);
  }
  return port;
};

// listen starts server on 127.0.0.1:PORT and prints the ready line, with the port it
// listens on, once it accepts.
const listen = (server) => {
  const port = listenPort();
  server.on('error', (err) => {
    process.stderr.write(`listen failed: ${err.message}\n`);
    process.exit(1);
  });
  server.listen(port, '127.0.0.1', () => log('ready', {port: server.address().port}));
  process.on('SIGTERM', () => process.exit(0));
  process.on('SIGINT', () => process.exit(0));
};

// quiet is the logger handed to the SDK: its messages go to stderr so they never mix
// with the JSON lines the test parses.
const quiet = {
  info: (...a) => process.stderr.write(`info ${JSON.stringify(a)}\n`),
  error: (...a) => process.stderr.write(`error ${JSON.stringify(a)}\n`),
  debug: () => {},
};

module.exports = {log, listen, quiet};
