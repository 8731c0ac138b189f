import Capture
import FlowTerms
import Wire

/// How many bytes each event of one inspected flow takes in the decrypted capture's file, so a
/// loop can lay a chunk of plaintext out in the file's format before the writer has built its
/// packets (`DecryptedCaptureBatch`): the synthesized blocks' sizes depend only on the stream's
/// family, its MSS and its comment, never on sequence numbers or times. Pure: made once per flow,
/// when it begins, from the same synthesizer and block lengths the writer uses
/// (`TCPStreamSynthesizer`, `TCPSegmentBuilder.length`, `PcapngBlocks.enhancedPacketLength`).
public struct DecryptedCaptureLayout: Sendable, Equatable {
    /// A data segment's IP and TCP headers (no TCP option): 40 bytes over IPv4, 60 over IPv6.
    public let headerBytes: Int
    /// The stream's largest segment payload (`TCPStreamSynthesizer.maximumSegmentSize`).
    public let maximumSegmentSize: Int
    /// The handshake's three blocks (SYN, SYN-ACK, ACK), the first with the stream's comment.
    public let openingBytes: Int
    /// An end in order's three blocks (FIN-ACK, FIN-ACK, ACK).
    public let finishingBytes: Int
    /// A cut-off end's one block (RST-ACK).
    public let resetBytes: Int

    /// The layout of the stream the writer synthesizes for `flow` between `client` and `server`
    /// (with `DecryptedCaptureThread.streamComment(flow:)` on its first packet).
    public init(flow: UInt64, client: PacketEndpoint, server: PacketEndpoint) {
        let synthesizer = TCPStreamSynthesizer(client: client, server: server, clientISN: 0, serverISN: 0)
        let comment = PcapngBlocks.commentBytes(DecryptedCaptureThread.streamComment(flow: flow))
        func blockBytes(_ planned: [TCPStreamSynthesizer.PlannedSegment], commentFirst: Bool) -> Int {
            planned.enumerated().reduce(0) { total, item in
                total + PcapngBlocks.enhancedPacketLength(capturedLength: TCPSegmentBuilder.length(item.element.fields, payloadCount: 0),
                                                          direction: nil, commentLength: commentFirst && item.offset == 0 ? comment.count : nil)
            }
        }
        var opened = synthesizer
        openingBytes = blockBytes(opened.opening(), commentFirst: true)
        var finished = opened, reset = opened
        // Either side's FINs or RST are as large as the other's: the same headers, no payload.
        finishingBytes = blockBytes(finished.ending(.closedByClient), commentFirst: false)
        resetBytes = blockBytes(reset.ending(.reset(from: .serverToClient)), commentFirst: false)
        headerBytes = (synthesizer.client.address.isIPv6 ? 40 : 20) + 20
        maximumSegmentSize = synthesizer.maximumSegmentSize
    }

    /// The blocks of the stream's `end`: `finishingBytes` or `resetBytes`.
    public func endingBytes(_ end: StreamEnd) -> Int {
        if case .reset = end { return resetBytes }
        return finishingBytes
    }

    /// Where a data segment's payload starts in its block: the block's header and the packet's.
    public var payloadOffset: Int { PcapngBlocks.enhancedPacketHeaderSize + headerBytes }

    /// The block of a data segment carrying `count` bytes (`count` 0: the receiver's ACK).
    public func segmentBytes(_ count: Int) -> Int {
        PcapngBlocks.enhancedPacketLength(capturedLength: headerBytes + count, direction: nil, commentLength: nil)
    }

    /// The blocks of `count` bytes of data: segments of `maximumSegmentSize` bytes and the last
    /// of the rest, back to back, then the receiver's ACK (`TCPStreamSynthesizer.carrying`);
    /// none for 0 bytes.
    public func dataBytes(_ count: Int) -> Int {
        guard count > 0 else { return 0 }
        let whole = (count - 1) / maximumSegmentSize
        return whole * segmentBytes(maximumSegmentSize) + segmentBytes(count - whole * maximumSegmentSize) + segmentBytes(0)
    }

    /// Where the data's byte `index` goes, from the first block's start (`dataBytes`): segment
    /// `index / maximumSegmentSize`'s payload, at its offset in it.
    public func dataOffset(ofByte index: Int) -> Int {
        let segment = index / maximumSegmentSize
        return segment * segmentBytes(maximumSegmentSize) + payloadOffset + (index - segment * maximumSegmentSize)
    }
}
