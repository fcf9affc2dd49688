// A gRPC server that limits the streams of each connection, as many
// deployments do: grpc-go's server with grpc.MaxConcurrentStreams (it
// advertises SETTINGS_MAX_CONCURRENT_STREAMS) and the helloworld.Greeter
// from google.golang.org/grpc/examples, whose unary SayHello waits 2 ms
// before it answers. It is what poolbench's grpc:// target calls by default
// (helloworld.Greeter/SayHello with {"name": "poolbench"});
// bench/tune-accuracy.sh's grpc-streams service.
//
//	go build -o grpc-streams . && ./grpc-streams [-delay 2ms] [-max-streams 10] [-listen 127.0.0.1:0]
//
// A connection carries at most -max-streams calls at once (a client that
// sends more waits for a free stream), so a client with C calls in flight
// needs C / max-streams connections to keep them all at the server.
// Prints `grpc 127.0.0.1:PORT` as its first line once listening; stops on
// SIGTERM or SIGINT.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	pb "google.golang.org/grpc/examples/helloworld/helloworld"
)

type greeter struct {
	pb.UnimplementedGreeterServer
	delay time.Duration
}

func (g *greeter) SayHello(ctx context.Context, in *pb.HelloRequest) (*pb.HelloReply, error) {
	select {
	case <-time.After(g.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &pb.HelloReply{Message: "Hello " + in.GetName()}, nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	delay := flag.Duration("delay", 2*time.Millisecond, "time SayHello takes")
	streams := flag.Uint("max-streams", 10, "most concurrent streams per connection (SETTINGS_MAX_CONCURRENT_STREAMS)")
	flag.Parse()

	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	s := grpc.NewServer(grpc.MaxConcurrentStreams(uint32(*streams)))
	pb.RegisterGreeterServer(s, &greeter{delay: *delay})
	fmt.Printf("grpc %s\n", lis.Addr())
	os.Stdout.Sync()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		s.Stop()
	}()
	if err := s.Serve(lis); err != nil {
		log.Fatalf("serve: %v", err)
	}
}
