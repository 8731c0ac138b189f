/// Decides what a retention pass deletes (pure), over the three stores together, so that what
/// `tv storage` promises and what a pass does cannot differ ("Retention cuts both halves or it
/// lies", seed 000 Settings).
///
/// - History: flows that started before `now - historyMaxAge` go (with their packets, names,
///   exchanges and content, which the `StorageManager` deletes with them), except audit evidence.
/// - Captures: first the files whose row a killed pass marked deleted, then the expired (last written before
///   `now - capturesMaxAge`), then the oldest while the files together exceed
///   `capturesMaxBytes`. The file being recorded and audit evidence are never deleted and still
///   count towards the size; when only they are left over the limit, the plan says which.
///   When the evidence is `.unknown`, no capture is deleted and the history keeps its rows.
/// - Content: `ContentRetentionPlanner` (its expiry and its fixed ceiling, segments holding
///   audit evidence kept), the one content planner, unchanged.
public enum RetentionPlanner {
    /// The plan for `inventory` under `limits` at `now` (µs since the epoch).
    public static func plan(inventory: StorageInventory, limits: StorageLimits, evidence: AuditEvidence = .none,
                            now: Int64) -> RetentionPlan {
        let content = ContentRetentionPlanner.plan(segments: inventory.contentSegments, now: now,
                                                   expiry: limits.contentExpiry, evidence: evidence, ceiling: limits.contentCeiling)
        var flowsBefore: Int64?
        if let age = limits.historyMaxAge, evidence != .unknown, let oldest = inventory.oldestFlowStart,
           oldest < now - age {
            flowsBefore = now - age
        }
        let files = inventory.captures.sorted { $0.sequence < $1.sequence }
        let recording = files.last(where: \.isRecording)?.sequence
        var drops: [RetentionPlan.CaptureDrop] = []
        var kept: [CaptureFileFacts] = []
        let protected = evidence.captures
        for file in files {
            let deletable = evidence != .unknown && !file.isRecording && !protected.contains(file.sequence)
            if deletable && !file.hasRow {
                drops.append(.init(sequence: file.sequence, reason: .unreferenced, bytes: file.bytes))
            } else if deletable, let age = limits.capturesMaxAge, file.lastWrite < now - age {
                drops.append(.init(sequence: file.sequence, reason: .expired, bytes: file.bytes))
            } else {
                kept.append(file)
            }
        }
        var total = kept.reduce(Int64(0)) { $0 + $1.bytes }
        var stillOver: RetentionPlan.CapturesStillOver?
        if let limit = limits.capturesMaxBytes, total > limit {
            var left: [CaptureFileFacts] = []
            for file in kept {
                if total > limit, evidence != .unknown, !file.isRecording, !protected.contains(file.sequence) {
                    drops.append(.init(sequence: file.sequence, reason: .overLimit, bytes: file.bytes))
                    total -= file.bytes
                } else {
                    left.append(file)
                }
            }
            if total > limit {
                if evidence == .unknown {
                    stillOver = .evidenceUnknown
                } else {
                    stillOver = left.contains { protected.contains($0.sequence) } ? .evidence : .recording
                }
            }
        }
        drops.sort { $0.sequence < $1.sequence }
        return RetentionPlan(deleteFlowsStartedBefore: flowsBefore, exemptFlows: evidence.flows, captureDrops: drops,
                             capturesBytesAfter: total, capturesStillOver: stillOver, sparedRecording: recording,
                             content: content)
    }

    /// The capture files being recorded now (`recording`, by sequence) that `limits` would
    /// delete once they close, as their sessions stop or they rotate: each taken as closed now
    /// (its age counting from now) and planned with the other files. A file never deleted while
    /// it is written still goes at its close when it alone is over `captures.maxBytes`: a trial
    /// lowered the limit below a running `tv exec`'s 40 MiB file and lost the whole capture,
    /// after a consent that counted the saved files only.
    public static func recordingDoomedOnceClosed(inventory: StorageInventory, recording: Set<Int>, limits: StorageLimits,
                                                 evidence: AuditEvidence = .none, now: Int64) -> [RetentionPlan.CaptureDrop] {
        guard !recording.isEmpty else { return [] }
        var closed = inventory
        closed.contentSegments = []
        closed.captures = inventory.captures.map { file in
            guard recording.contains(file.sequence) else { return file }
            var file = file
            file.isRecording = false
            file.endedAt = now
            return file
        }
        var captureLimits = limits
        captureLimits.historyMaxAge = nil
        return plan(inventory: closed, limits: captureLimits, evidence: evidence, now: now).captureDrops
            .filter { recording.contains($0.sequence) }
    }

    /// What delete-everything removes: every flow (evidence kept), every capture file but the one
    /// being recorded and evidence, all content (the segment being written spared by the content
    /// store's own rule).
    public static func everything(inventory: StorageInventory, evidence: AuditEvidence = .none,
                                  now: Int64) -> RetentionPlan {
        let limits = StorageLimits(historyMaxAge: nil, capturesMaxBytes: nil, capturesMaxAge: nil)
        var plan = RetentionPlanner.plan(inventory: inventory, limits: limits, evidence: evidence, now: now)
        plan.deleteFlowsStartedBefore = inventory.oldestFlowStart == nil || evidence == .unknown ? nil : Int64.max
        let protected = evidence.captures
        plan.captureDrops = inventory.captures.sorted { $0.sequence < $1.sequence }.compactMap { file in
            guard evidence != .unknown, !file.isRecording, !protected.contains(file.sequence) else { return nil }
            return .init(sequence: file.sequence, reason: file.hasRow ? .requested : .unreferenced, bytes: file.bytes)
        }
        plan.capturesBytesAfter = inventory.captures.reduce(0) { $0 + $1.bytes } - plan.captureBytesFreed
        plan.capturesStillOver = nil
        plan.deletesAllContent = true
        return plan
    }
}
