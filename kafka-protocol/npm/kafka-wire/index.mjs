// The ES module face of kafka-wire (index.js is the one implementation).
import kafkaWire from './index.js';

export const { startFakeCluster, binaryPath, parseFaultCounts, FakeClusterError, ControlError, PLATFORMS } = kafkaWire;
export default kafkaWire;
