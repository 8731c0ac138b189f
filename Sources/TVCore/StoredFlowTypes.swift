import FlowStore

// The flow database's names for what the proxy also names (FlowStatus, HostOrigin,
// FlowTransport). A file that imports both modules uses these to say which one it means.
typealias StoredFlowStatus = FlowStatus
typealias StoredHostOrigin = HostOrigin
typealias StoredFlowTransport = FlowTransport
