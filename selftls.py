import socket, ssl, time, threading
ctx=ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain("self.pem","self.key")
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR,1); s.bind(("127.0.0.1",47005)); s.listen(16); s.settimeout(5)
end=time.time()+1500
def h(c):
    try: t=ctx.wrap_socket(c, server_side=True); time.sleep(1); t.close()
    except Exception as e: pass
while time.time()<end:
    try: c,_=s.accept()
    except socket.timeout: continue
    threading.Thread(target=h,args=(c,),daemon=True).start()
