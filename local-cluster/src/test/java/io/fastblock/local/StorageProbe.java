package io.fastblock.local;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.codec.StorageFrames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;

/** Reads one replica's own copy of a chunk range over the storage protocol, bypassing the gateway. */
final class StorageProbe implements AutoCloseable {
    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private long nextId = 1;

    StorageProbe(String host, int port) throws IOException {
        socket = new Socket(host, port);
        socket.setSoTimeout(10_000);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    StorageResponse read(ChainAddress chain, ChunkId chunk, long offset, int length) throws IOException {
        ByteBuf frame = StorageFrames.encode(new ReadRequest(nextId++, chain, chunk, offset, length),
                ByteBufAllocator.DEFAULT);
        try {
            out.write(ByteBufUtil.getBytes(frame));
            out.flush();
        } finally {
            frame.release();
        }
        int len = in.readInt();
        byte[] body = new byte[len];
        in.readFully(body);
        ByteBuf whole = Unpooled.buffer(4 + len).writeInt(len).writeBytes(body);
        try {
            StorageMessage m = StorageFrames.decode(whole);
            return (StorageResponse) m;
        } finally {
            whole.release();
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
