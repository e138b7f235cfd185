package io.fastblock.protocol.client;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Extents;
import io.fastblock.protocol.ExtentsRequest;
import io.fastblock.protocol.FenceRequest;
import io.fastblock.protocol.PingRequest;
import io.fastblock.protocol.ProtocolException;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.codec.StorageFrames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.function.LongFunction;

/**
 * A small synchronous storage protocol client for admin work (namenode fencing, snapshots, tests):
 * one plain socket, one request at a time, a timeout on connect and on every answer. Not for the
 * data path. After any transport failure or timeout the connection is dropped (a late answer must
 * not be taken for the next request's) and the next call connects again. Thread-safe by
 * serialising calls.
 */
public final class BlockingStorageClient implements AutoCloseable {
    private final InetSocketAddress address;
    private final int timeoutMillis;
    private Socket socket;
    private DataInputStream in;
    private OutputStream out;
    private long nextRequestId = 1;
    private boolean closed;

    public BlockingStorageClient(InetSocketAddress address, Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
        this.address = address;
        this.timeoutMillis = Math.toIntExact(Math.max(1, timeout.toMillis()));
    }

    public BlockingStorageClient(String host, int port, Duration timeout) {
        this(new InetSocketAddress(host, port), timeout);
    }

    public InetSocketAddress address() {
        return address;
    }

    public void ping() throws IOException {
        expectOk(call(PingRequest::new));
    }

    /**
     * Raises the server's lease-epoch floor of {@code volumeId} to {@code epoch}
     * ({@link FenceRequest#SEALED} seals it). Returns once the server answered OK, i.e. once every
     * write it admitted for the volume before the fence has completed.
     */
    public void fence(long volumeId, long epoch) throws IOException {
        expectOk(call(id -> new FenceRequest(id, volumeId, epoch)));
    }

    public Extents extents(ChainAddress chain, ChunkId chunk, long offset, int length) throws IOException {
        StorageResponse r = expectOk(call(id -> new ExtentsRequest(id, chain, chunk, offset, length)));
        ByteBuf data = r.data();
        Extents extents = Extents.decode(data);
        if (data.isReadable()) {
            throw new ProtocolException(data.readableBytes() + " bytes after the extent list of an EXTENTS answer");
        }
        return extents;
    }

    /** Trims {@code [offset, offset + length)} through the chain; send it to the head. */
    public void trim(ChainAddress chain, ChunkId chunk, long offset, int length) throws IOException {
        expectOk(call(id -> WriteRequest.trim(id, chain, chunk, offset, length)));
    }

    /** Writes {@code data} at {@code offset} through the chain; send it to the head. */
    public void write(ChainAddress chain, ChunkId chunk, long offset, byte[] data) throws IOException {
        expectOk(call(id -> new WriteRequest(id, 0, chain, chunk, offset, 0, Unpooled.wrappedBuffer(data))));
    }

    public byte[] read(ChainAddress chain, ChunkId chunk, long offset, int length) throws IOException {
        StorageResponse r = expectOk(call(id -> new ReadRequest(id, chain, chunk, offset, length)));
        return ByteBufUtil.getBytes(r.data());
    }

    /** One round trip: which blocks of the range are allocated, and its bytes. */
    public ExtentsAndData readWithExtents(ChainAddress chain, ChunkId chunk, long offset, int length)
            throws IOException {
        StorageResponse r = expectOk(call(id -> ReadRequest.withExtents(id, chain, chunk, offset, length)));
        ByteBuf data = r.data();
        Extents extents = Extents.decode(data);
        return new ExtentsAndData(extents, ByteBufUtil.getBytes(data));
    }

    /**
     * Sends one request and waits for its answer, whatever the status. The answer's data is a heap
     * buffer the caller may ignore (no pooled memory to release).
     */
    public synchronized StorageResponse call(LongFunction<StorageMessage> build) throws IOException {
        if (closed) {
            throw new IOException("client for " + address + " is closed");
        }
        long requestId = nextRequestId++;
        StorageMessage request = build.apply(requestId);
        boolean ok = false;
        try {
            connectIfNeeded();
            ByteBuf frame = StorageFrames.encode(request, UnpooledByteBufAllocator.DEFAULT);
            try {
                frame.readBytes(out, frame.readableBytes());
            } finally {
                frame.release();
            }
            out.flush();
            StorageResponse response = readResponse(request, requestId);
            ok = true;
            return response;
        } catch (SocketTimeoutException e) {
            throw new SocketTimeoutException(request.op() + " to " + address + " got no answer within "
                    + timeoutMillis + " ms");
        } finally {
            if (!ok) {
                disconnect();
            }
        }
    }

    private StorageResponse readResponse(StorageMessage request, long requestId) throws IOException {
        int length = in.readInt();
        if (length < StorageFrames.PREAMBLE - 4 || length > StorageFrames.MAX_FRAME) {
            throw new ProtocolException("answer frame length " + length + " from " + address);
        }
        byte[] frame = new byte[4 + length];
        in.readFully(frame, 4, length);
        ByteBuf buf = Unpooled.wrappedBuffer(frame);
        buf.setInt(0, length);
        StorageMessage decoded = StorageFrames.decode(buf);
        if (!(decoded instanceof StorageResponse response)) {
            throw new ProtocolException("server " + address + " sent a " + decoded.op() + " request, not an answer");
        }
        if (response.requestId() != requestId || response.op() != request.op()) {
            throw new ProtocolException("answer " + response.op() + "#" + response.requestId() + " to request "
                    + request.op() + "#" + requestId);
        }
        return response;
    }

    private static StorageResponse expectOk(StorageResponse r) throws StorageStatusException {
        if (!r.isOk()) {
            throw new StorageStatusException(r.op(), r.status(), r.message());
        }
        return r;
    }

    private void connectIfNeeded() throws IOException {
        if (socket != null) {
            return;
        }
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.setSoTimeout(timeoutMillis);
            s.connect(address, timeoutMillis);
            in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            out = new BufferedOutputStream(s.getOutputStream());
            socket = s;
        } catch (IOException e) {
            s.close();
            throw e;
        }
    }

    private void disconnect() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // already broken; nothing to do
            }
            socket = null;
            in = null;
            out = null;
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        disconnect();
    }
}
