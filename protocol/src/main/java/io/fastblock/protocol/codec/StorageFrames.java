package io.fastblock.protocol.codec;

import io.fastblock.protocol.AnswerToRequest;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ChangesRequest;
import io.fastblock.protocol.ChunkListRequest;
import io.fastblock.protocol.CopyReadRequest;
import io.fastblock.protocol.ExtentsRequest;
import io.fastblock.protocol.FenceRequest;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.PingRequest;
import io.fastblock.protocol.ProtocolException;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;

/**
 * The storage protocol's frame layout, independent of any channel.
 *
 * <pre>
 * frame    = length:int32 (bytes after this field) magic:uint8 (0xFB) version:uint8 (1)
 *            op:uint8 (| 0x80 for a response) flags:uint8 requestId:int64 body
 * PING     = (empty)
 * WRITE    = groupId:int32 chainVersion:int64 leaseEpoch:int64 volumeId:int64 chunkIndex:int64
 *            offset:int64 sequence:int64 length:int32
 *            [answerTo:int64 answerId:int64] data[length]
 *            flags: 0x01 FORWARDED (replica to successor), 0x02 TRIM: the same header, NO data
 *            bytes; length is the length of the range given back; 0x04 ANSWER_DIRECT: the two
 *            answer fields are present (the tail also answers client answerTo under answerId)
 * READ     = groupId:int32 chainVersion:int64 leaseEpoch:int64 volumeId:int64 chunkIndex:int64
 *            offset:int64 length:int32
 *            flags: 0x02 WITH_EXTENTS: answer data = Extents of the range, then the bytes
 * CHUNK_LIST = groupId:int32 chainVersion:int64 leaseEpoch:int64 [joinerLength:uint8 joiner[utf8]]
 *                                                 (answer data: ChunkListing; the joiner part only when
 *                                                 a joining node asks, naming itself, 1..255 bytes)
 * COPY_READ  = same layout as READ                                     (answer data: the bytes)
 * EXTENTS  = same layout as READ                  (answer data: Extents = count:int32 (offset:int64 length:int32){count})
 * FENCE    = volumeId:int64 epoch:int64           (server-wide; answer: empty data)
 * CHANGES  = groupId:int32 chainVersion:int64 leaseEpoch:int64 volumeId:int64 chunkIndex:int64 since:int64
 *                                                 (answer data: ChunkChanges)
 * ANSWER_TO = clientId:int64                     (server-wide; this connection takes the client's direct answers)
 * response = flags: 0x01 ANSWERED (a write's OK the tail also sent straight to the client)
 *            status:uint8 messageLength:uint16 message[utf8] dataLength:int32 data[dataLength]
 * </pre>
 * All integers are big-endian. Data is never copied: encoding composes the header with the
 * payload buffer and decoding slices the payload out of the frame.
 */
public final class StorageFrames {
    public static final int MAGIC = 0xFB;
    public static final int VERSION = 1;
    /** Bytes from the start of the frame up to and including the request id. */
    public static final int PREAMBLE = 4 + 1 + 1 + 1 + 1 + 8;
    /** The largest payload a frame may carry: bounds memory per request. */
    public static final int MAX_DATA = 16 * 1024 * 1024;
    public static final int MAX_FRAME = MAX_DATA + 1024;
    /**
     * An EXTENTS query carries no data, so its span is bounded by the largest chunk (1 GiB), not by
     * {@link #MAX_DATA}: GET LBA STATUS asks about a whole 64 MiB chunk at once. Its answer stays small
     * (at worst one 12-byte extent per 8 KiB: 1.5 MiB for 1 GiB).
     */
    public static final int MAX_EXTENTS_SPAN = 1 << 30;

    private static final int CHAIN = 4 + 8 + 8;
    private static final int CHAIN_AND_CHUNK = CHAIN + 8 + 8;

    private StorageFrames() {
    }

    /** Encodes a message; takes ownership of any payload buffer (it becomes part of the result). */
    public static ByteBuf encode(StorageMessage message, ByteBufAllocator alloc) {
        ByteBuf payload = payloadOf(message);
        ByteBuf header = alloc.buffer(PREAMBLE + 64);
        header.writeInt(0); // patched below
        header.writeByte(MAGIC);
        header.writeByte(VERSION);
        int op = message.op().code() | (message instanceof StorageResponse ? OpCode.RESPONSE_BIT : 0);
        header.writeByte(op);
        header.writeByte(flagsOf(message));
        header.writeLong(message.requestId());
        if (message instanceof WriteRequest w) {
            writeChainAndChunk(header, w.chain(), w.chunk());
            header.writeLong(w.offset());
            header.writeLong(w.sequence());
            header.writeInt(w.isTrim() ? w.trimLength() : payload.readableBytes());
            if (w.answerDirect()) {
                header.writeLong(w.answerTo());
                header.writeLong(w.answerId());
            }
        } else if (message instanceof ReadRequest r) {
            writeChainAndChunk(header, r.chain(), r.chunk());
            header.writeLong(r.offset());
            header.writeInt(r.length());
        } else if (message instanceof CopyReadRequest r) {
            writeChainAndChunk(header, r.chain(), r.chunk());
            header.writeLong(r.offset());
            header.writeInt(r.length());
        } else if (message instanceof ExtentsRequest r) {
            writeChainAndChunk(header, r.chain(), r.chunk());
            header.writeLong(r.offset());
            header.writeInt(r.length());
        } else if (message instanceof ChangesRequest c) {
            writeChainAndChunk(header, c.chain(), c.chunk());
            header.writeLong(c.since());
        } else if (message instanceof AnswerToRequest a) {
            header.writeLong(a.clientId());
        } else if (message instanceof FenceRequest f) {
            header.writeLong(f.volumeId());
            header.writeLong(f.epoch());
        } else if (message instanceof ChunkListRequest l) {
            writeChain(header, l.chain());
            if (l.joiner() != null) {
                byte[] joiner = l.joiner().getBytes(StandardCharsets.UTF_8);
                header.writeByte(joiner.length);
                header.writeBytes(joiner);
            }
        } else if (message instanceof StorageResponse s) {
            header.writeByte(s.status().code());
            byte[] text = truncate(s.message().getBytes(StandardCharsets.UTF_8));
            header.writeShort(text.length);
            header.writeBytes(text);
            header.writeInt(payload.readableBytes());
        }
        int frameLength = header.readableBytes() - 4 + payload.readableBytes();
        header.setInt(0, frameLength);
        if (!payload.isReadable()) {
            payload.release();
            return header;
        }
        CompositeByteBuf frame = alloc.compositeBuffer(2);
        frame.addComponents(true, header, payload);
        return frame;
    }

    /**
     * Decodes one whole frame (length field included). Payloads are retained slices of
     * {@code frame}; the caller still releases {@code frame} itself.
     */
    public static StorageMessage decode(ByteBuf frame) {
        int length = frame.readInt();
        if (length != frame.readableBytes()) {
            throw new ProtocolException("frame length " + length + " but " + frame.readableBytes() + " bytes follow");
        }
        int magic = frame.readUnsignedByte();
        if (magic != MAGIC) {
            throw new ProtocolException("bad magic 0x" + Integer.toHexString(magic));
        }
        int version = frame.readUnsignedByte();
        if (version != VERSION) {
            throw new ProtocolException("unsupported protocol version " + version);
        }
        int opByte = frame.readUnsignedByte();
        int flags = frame.readUnsignedByte();
        long requestId = frame.readLong();
        OpCode op = OpCode.fromCode(opByte & ~OpCode.RESPONSE_BIT);
        boolean response = (opByte & OpCode.RESPONSE_BIT) != 0;
        try {
            if (response) {
                Status status = Status.fromCode(frame.readUnsignedByte());
                int textLength = frame.readUnsignedShort();
                String text = frame.readCharSequence(textLength, StandardCharsets.UTF_8).toString();
                ByteBuf data = readData(frame);
                return new StorageResponse(requestId, op, status, text, data, flags);
            }
            switch (op) {
                case PING:
                    return new PingRequest(requestId);
                case WRITE: {
                    ChainAddress chain = readChain(frame);
                    ChunkId chunk = readChunk(frame);
                    long offset = readOffset(frame);
                    long sequence = frame.readLong();
                    int len = frame.readInt();
                    long answerTo = 0;
                    long answerId = 0;
                    if ((flags & WriteRequest.FLAG_ANSWER_DIRECT) != 0) {
                        answerTo = frame.readLong();
                        answerId = frame.readLong();
                        if (answerTo == 0) {
                            throw new ProtocolException("ANSWER_DIRECT write names client 0");
                        }
                    }
                    if ((flags & WriteRequest.FLAG_TRIM) != 0) {
                        if (len < 0) {
                            throw new ProtocolException("negative trim length " + len);
                        }
                        if (frame.isReadable()) {
                            throw new ProtocolException("a trim carries no data, but " + frame.readableBytes()
                                    + " bytes follow its header");
                        }
                        return new WriteRequest(requestId, flags, chain, chunk, offset, sequence, Unpooled.EMPTY_BUFFER, len,
                                answerTo, answerId);
                    }
                    ByteBuf data = sliceData(frame, len);
                    return new WriteRequest(requestId, flags, chain, chunk, offset, sequence, data, 0, answerTo, answerId);
                }
                case READ:
                case COPY_READ:
                case EXTENTS: {
                    ChainAddress chain = readChain(frame);
                    ChunkId chunk = readChunk(frame);
                    long offset = readOffset(frame);
                    int len = frame.readInt();
                    int max = op == OpCode.EXTENTS ? MAX_EXTENTS_SPAN : MAX_DATA;
                    if (len < 0 || len > max) {
                        throw new ProtocolException(op.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ')
                                + " length " + len + " outside 0.." + max);
                    }
                    expectEnd(frame, op);
                    switch (op) {
                        case READ:
                            return new ReadRequest(requestId, flags, chain, chunk, offset, len);
                        case COPY_READ:
                            return new CopyReadRequest(requestId, chain, chunk, offset, len);
                        default:
                            return new ExtentsRequest(requestId, chain, chunk, offset, len);
                    }
                }
                case ANSWER_TO: {
                    if (frame.readableBytes() != 8) {
                        throw new ProtocolException("ANSWER_TO body of " + frame.readableBytes() + " bytes, expected 8");
                    }
                    return new AnswerToRequest(requestId, frame.readLong());
                }
                case FENCE: {
                    if (frame.readableBytes() != 16) {
                        throw new ProtocolException("FENCE body of " + frame.readableBytes() + " bytes, expected 16");
                    }
                    return new FenceRequest(requestId, frame.readLong(), frame.readLong());
                }
                case CHANGES: {
                    if (frame.readableBytes() != CHAIN_AND_CHUNK + 8) {
                        throw new ProtocolException("CHANGES body of " + frame.readableBytes() + " bytes, expected "
                                + (CHAIN_AND_CHUNK + 8));
                    }
                    ChainAddress chain = readChain(frame);
                    ChunkId chunk = readChunk(frame);
                    return new ChangesRequest(requestId, chain, chunk, frame.readLong());
                }
                case CHUNK_LIST: {
                    int body = frame.readableBytes();
                    int joinerBytes = body > CHAIN ? frame.getUnsignedByte(frame.readerIndex() + CHAIN) : 0;
                    if (body != CHAIN && (joinerBytes == 0 || body != CHAIN + 1 + joinerBytes)) {
                        throw new ProtocolException("CHUNK_LIST body of " + body + " bytes, expected " + CHAIN
                                + " (no joiner) or " + CHAIN + " + 1 + the joiner's 1..255 bytes");
                    }
                    ChainAddress chain = new ChainAddress(frame.readInt(), frame.readLong(), frame.readLong());
                    if (body == CHAIN) {
                        return new ChunkListRequest(requestId, chain);
                    }
                    frame.skipBytes(1);
                    String joiner = frame.readCharSequence(joinerBytes, StandardCharsets.UTF_8).toString();
                    return new ChunkListRequest(requestId, chain, joiner);
                }
                default:
                    throw new ProtocolException("unexpected op " + op);
            }
        } catch (IndexOutOfBoundsException e) {
            throw new ProtocolException("truncated " + op + " frame");
        } catch (IllegalArgumentException e) {
            throw new ProtocolException(e.getMessage());
        }
    }

    private static int flagsOf(StorageMessage message) {
        if (message instanceof WriteRequest w) {
            return w.flags();
        }
        if (message instanceof ReadRequest r) {
            return r.flags();
        }
        if (message instanceof StorageResponse s) {
            return s.flags();
        }
        return 0;
    }

    private static ByteBuf payloadOf(StorageMessage message) {
        if (message instanceof WriteRequest w) {
            return w.data();
        }
        if (message instanceof StorageResponse s) {
            return s.data();
        }
        return Unpooled.EMPTY_BUFFER;
    }

    private static void writeChain(ByteBuf out, ChainAddress chain) {
        out.writeInt(chain.groupId());
        out.writeLong(chain.chainVersion());
        out.writeLong(chain.leaseEpoch());
    }

    /** Ops added after version 1's first three insist on an exact body, so garbage after it is caught. */
    private static void expectEnd(ByteBuf frame, OpCode op) {
        if (op != OpCode.READ && frame.isReadable()) {
            throw new ProtocolException(frame.readableBytes() + " unexpected bytes after the " + op + " body");
        }
    }

    private static void writeChainAndChunk(ByteBuf out, ChainAddress chain, ChunkId chunk) {
        writeChain(out, chain);
        out.writeLong(chunk.volumeId());
        out.writeLong(chunk.index());
    }

    private static ChainAddress readChain(ByteBuf in) {
        if (in.readableBytes() < CHAIN_AND_CHUNK) {
            throw new ProtocolException("truncated chain address");
        }
        return new ChainAddress(in.readInt(), in.readLong(), in.readLong());
    }

    private static ChunkId readChunk(ByteBuf in) {
        return new ChunkId(in.readLong(), in.readLong());
    }

    private static long readOffset(ByteBuf in) {
        long offset = in.readLong();
        if (offset < 0) {
            throw new ProtocolException("negative offset " + offset);
        }
        return offset;
    }

    private static ByteBuf readData(ByteBuf in) {
        return sliceData(in, in.readInt());
    }

    /** The rest of the frame as the {@code len} data bytes its header announced. */
    private static ByteBuf sliceData(ByteBuf in, int len) {
        if (len < 0 || len > MAX_DATA || len != in.readableBytes()) {
            throw new ProtocolException("data length " + len + " does not match the " + in.readableBytes()
                    + " bytes left in the frame");
        }
        return len == 0 ? Unpooled.EMPTY_BUFFER : in.readRetainedSlice(len);
    }

    private static byte[] truncate(byte[] text) {
        if (text.length <= 1024) {
            return text;
        }
        byte[] cut = new byte[1024];
        System.arraycopy(text, 0, cut, 0, cut.length);
        return cut;
    }
}
