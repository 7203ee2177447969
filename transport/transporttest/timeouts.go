package transporttest

import "time"

// fillProbeTimeout is how long NewUnaccepting waits for a connect that should
// complete at once (queue not yet full) before concluding that SYNs are dropped.
const fillProbeTimeout = 200 * time.Millisecond
