# The guest's side of tests/net/hostnet_test.py: the host and the guest talk
# through QEMU's user network (hostfwd into the guest, guestfwd out of it),
# with Debian's busybox httpd, wget and nc on this side. Each step prints a
# "hostnet:" line that the host reads; the host says nothing back but what
# it sends over the network.
cd /tmp || exit 1
mkdir -p www
seq 1 400000 > www/big                  # the host makes the same bytes
httpd -p 80 -h /tmp/www || echo "hostnet: httpd failed"
nc -l -p 81 < /dev/null > up &
echo "hostnet: ready"
wait                                    # for the host's upload to end
echo "hostnet: up $(wc -c < up) $(md5sum < up)"
wget -q -O down http://10.0.2.100:80/big
echo "hostnet: wget status $?"
echo "hostnet: down $(wc -c < down) $(md5sum < down)"
wget -q -O - http://10.0.2.100:80/missing > /dev/null 2>&1
echo "hostnet: wget missing status $?"
seq 1 400000 | nc 10.0.2.100 81
echo "hostnet: nc status $?"
echo "hostnet: done"
