// A gRPC server nobody here wrote the handler stack of: grpc-go's server
// with the helloworld.Greeter from google.golang.org/grpc/examples, whose
// unary SayHello waits -delay before it answers. It is what poolbench's
// grpc:// target calls by default (helloworld.Greeter/SayHello with
// {"name": "poolbench"}); bench/tune-accuracy.sh's grpc-slow (-delay 500ms,
// no stream limit) and grpc-streams (-delay 2ms -max-streams 10) services.
//
//	go build -o grpc-greeter . && ./grpc-greeter [-delay 2ms] [-max-streams 10] [-listen 127.0.0.1:0]
//
// With -max-streams N > 0 a connection carries at most N calls at once
// (grpc.MaxConcurrentStreams, advertised as SETTINGS_MAX_CONCURRENT_STREAMS;
// a client that sends more waits for a free stream), so a client with C
// calls in flight needs C / N connections to keep them all at the server.
// With 0 there is no limit beyond grpc-go's default (none): every call in
// flight waits on its own goroutine. Prints `grpc 127.0.0.1:PORT` as its
// first line once listening; stops on SIGTERM or SIGINT.
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
	streams := flag.Uint("max-streams", 0, "most concurrent streams per connection (SETTINGS_MAX_CONCURRENT_STREAMS); 0: no limit")
	flag.Parse()

	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	var opts []grpc.ServerOption
	if *streams > 0 {
		opts = append(opts, grpc.MaxConcurrentStreams(uint32(*streams)))
	}
	s := grpc.NewServer(opts...)
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
